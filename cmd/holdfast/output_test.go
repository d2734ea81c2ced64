package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
)

// TestImagesBuildStdoutCarriesOnlyResults: `holdfast images build` prints
// what it built on stdout and its steps on stderr, so that
// `holdfast images build | grep @sha256` or a script reading the refs sees
// no log line. The builder is replaced: the split is the command's, and a
// real cross-build takes minutes (TestImagesRealUpstreams runs one).
func TestImagesBuildStdoutCarriesOnlyResults(t *testing.T) {
	root := fixture(t).Config.Root
	ref, err := name.NewTag("r.example/holdfast-dist/up:v1.2.0-holdfast.3")
	if err != nil {
		t.Fatal(err)
	}
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	buildImages = func(_ context.Context, o imagebuild.Options, up *pins.Upstream, pin pins.Pin) ([]imagebuild.Built, error) {
		fmt.Fprintf(o.Log, "up %s (patched) -> %s\n  go build ...\n  still building up (30s elapsed)\n", pin.Version, o.Trees.Out)
		return []imagebuild.Built{{
			Binary: "up", Ref: ref, Digest: digest, Layout: "/out/up", SBOM: "/out/up.spdx.json", CycloneDX: "/out/up.cdx.json",
			Tarballs: []string{"/out/up-linux-amd64.tar"},
		}}, nil
	}
	t.Cleanup(func() { buildImages = imagebuild.Build })

	code, stdout, stderr := runCLI(t, "images", "build", "--root", root, "--upstream", "up", "--out", t.TempDir())
	want := ref.String() + "@" + digest.String() + "\n  layout /out/up\n  sbom   /out/up.spdx.json\n  cdx    /out/up.cdx.json\n  docker load -i /out/up-linux-amd64.tar\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 0 and stdout:\n%s", code, stdout, want)
	}
	if !strings.Contains(stderr, "still building up (30s elapsed)") {
		t.Errorf("the builder's log is not on stderr:\n%s", stderr)
	}
}

// TestBuildStdoutCarriesOnlyResults builds the synthetic upstream: stdout
// is the summary line and the path of each binary; the pipeline's steps
// and the go command line are on stderr.
func TestBuildStdoutCarriesOnlyResults(t *testing.T) {
	fx := fixture(t)
	// The synthetic upstream builds "."; give it a main package.
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"overlay/up/main.go": "package main\n\nfunc main() {}\n"})
	bin := t.TempDir()
	code, stdout, stderr := runCLI(t, "build", "--root", fx.Config.Root, "--upstream", "up", "--bin", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "up v1.2.0: v1.2.0-holdfast.3, series ") {
		t.Fatalf("stdout:\n%s\nwant the summary line and one binary", stdout)
	}
	if path := strings.TrimPrefix(lines[1], "  "); filepath.Dir(path) != filepath.Join(bin, "up-v1.2.0") {
		t.Errorf("stdout names %q, want a binary in %s", path, filepath.Join(bin, "up-v1.2.0"))
	} else if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"up v1.2.0 (patched) -> ", "go build -trimpath"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
