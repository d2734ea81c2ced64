package image_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"debug/buildinfo"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense/modlicensetest"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// repoRoot is the holdfast checkout the tests run in: they check the
// repository's own pins.txt, go.mod and images/ Dockerfiles.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// testdataBinaries holds testdata/hello built for linux/amd64 and
// linux/arm64, once for the whole test binary (TestMain).
var testdataBinaries = map[string]string{}

// testdataDir is TestMain's temporary folder.
var testdataDir string

// testdataLicenses finds the licences of testdata/hello's modules in a
// made-up module cache and GOROOT holding real licence texts (TestMain):
// its main module (holdfast's, at provenance's UpstreamVersion) under
// Apache-2.0, golang.org/x/mod and the standard library under the Go
// project's licence.
var testdataLicenses image.Licenses

var errNoGo = errors.New("no go command on PATH")

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "holdfast-image-test-")
	if err != nil {
		panic(err)
	}
	testdataDir = dir
	buildErr := buildTestdata(dir)
	code := 0
	if buildErr != nil && !errors.Is(buildErr, errNoGo) {
		os.Stderr.WriteString("building testdata/hello: " + buildErr.Error() + "\n")
		code = 1
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildTestdata(dir string) error {
	if _, err := exec.LookPath("go"); err != nil {
		return errNoGo
	}
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, "linux", arch, "hello")
		// The flags holdfast's build uses (internal/pipeline/build).
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", out, "./testdata/hello")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return errors.New(err.Error() + "\n" + string(msg))
		}
		testdataBinaries[arch] = out
	}
	info, err := buildinfo.ReadFile(testdataBinaries["amd64"])
	if err != nil {
		return err
	}
	mods := []modlicensetest.Module{{Path: info.Main.Path, Version: provenance().UpstreamVersion, License: "Apache-2.0"}}
	for _, d := range info.Deps {
		mods = append(mods, modlicensetest.Module{Path: d.Path, Version: d.Version, License: "Go"})
	}
	goVersion, _, _ := strings.Cut(info.GoVersion, " ")
	modCache, goroot, err := modlicensetest.WriteGo(filepath.Join(dir, "go"), goVersion, mods...)
	if err != nil {
		return err
	}
	testdataLicenses, err = modlicense.New(modCache, goroot, modlicense.CycloneDX())
	return err
}

func needBinaries(t *testing.T) {
	t.Helper()
	if len(testdataBinaries) == 0 {
		t.Skip(errNoGo)
	}
}

var created = time.Date(2026, 12, 2, 10, 48, 45, 0, time.UTC)

func provenance() image.Provenance {
	return image.Provenance{
		Binary:          "hello",
		Version:         "v1.2.0-holdfast.3",
		UpstreamModule:  "example.com/up",
		UpstreamVersion: "v1.2.0",
		SeriesHash:      "h1:DLGGQE4gH26vaJSej2j+HdClOtLqH7YjuQF//5JL5GY=",
		Revision:        "3b03d41f00c0ffee",
		TreeState:       "clean",
		Source:          "https://github.com/holdfast-dist/holdfast",
		Created:         created,
	}
}

// input is an image of testdata/hello for both platforms, with the tree
// files and user of a made-up upstream.
func input(t *testing.T) image.Input {
	t.Helper()
	needBinaries(t)
	in, err := newInput(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// shared is the image of input, built once for the tests that only look
// at it: an image is an immutable value, and each build costs seconds
// under the race detector.
var shared struct {
	once sync.Once
	in   image.Input
	img  *image.Image
	err  error
}

func sharedImage(t *testing.T) (*image.Image, image.Input) {
	t.Helper()
	needBinaries(t)
	shared.once.Do(func() {
		tree := filepath.Join(testdataDir, "tree")
		if shared.err = os.Mkdir(tree, 0o755); shared.err != nil {
			return
		}
		if shared.in, shared.err = newInput(tree); shared.err != nil {
			return
		}
		shared.img, shared.err = image.Build(shared.in)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.img, shared.in
}

func newInput(tree string) (image.Input, error) {
	for name, content := range map[string]string{
		"files/manifests/b.json": `{"b":1}`,
		"files/manifests/a.json": `{"a":1}`,
		"scripts/cleanup.sh":     "#!/bin/sh\n",
		"not-copied.txt":         "x",
	} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return image.Input{}, err
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return image.Input{}, err
		}
	}
	ca, err := image.CABundle()
	if err != nil {
		return image.Input{}, err
	}
	zoneinfo, err := zipOf(map[string]string{"Europe/Paris": "TZif-paris", "UTC": "TZif-utc"})
	if err != nil {
		return image.Input{}, err
	}
	return image.Input{
		Spec: image.Spec{
			Path:       "/bin/${BINARY}",
			Entrypoint: []string{"/bin/hello"},
			WorkingDir: "/",
			Env:        []string{"MANIFEST_PATH=/files/manifests"},
			TreeFiles:  []string{"files", "scripts"},
			User:       "65532:65532",
		},
		Provenance: provenance(),
		Binaries: []image.Binary{
			{OS: "linux", Arch: "arm64", Path: testdataBinaries["arm64"]},
			{OS: "linux", Arch: "amd64", Path: testdataBinaries["amd64"]},
		},
		Tree:     tree,
		CABundle: ca,
		ZoneInfo: zoneinfo,
		Licenses: testdataLicenses,
	}, nil
}

// entry is a tar header and content read back from a layer.
type entry struct {
	hdr  *tar.Header
	data []byte
}

func layerEntries(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []entry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{hdr, buf.Bytes()})
	}
}

// zipOf builds a zoneinfo.zip-like archive.
func zipOf(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, content); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
