package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild/imagebuildtest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/release"
)

func TestChartsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"charts"}, "want `charts build` or `charts push`"},
		{[]string{"charts", "deploy"}, `unknown charts command "deploy"`},
		{[]string{"charts", "push"}, "--registry is required"},
		{[]string{"charts", "build", "extra"}, `unexpected argument "extra"`},
		{[]string{"charts", "build", "--tags", "--images", "/tmp/images"}, "--tags and --images exclude each other"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// Pushing before building names the archive it wants and the command that
// makes it, without running helm (--helm is never executed here).
func TestChartsPushBeforeBuild(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, _, stderr := runCLI(t, "charts", "push", "--root", root, "--out", out, "--helm", "/nonexistent/helm",
		"--registry", "127.0.0.1:1/charts", "--plain-http")
	if code != 1 || !strings.Contains(stderr, "build the charts first (holdfast charts build)") || !strings.Contains(stderr, out) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming the missing archive", code, stderr)
	}
}

// `charts push` checks its inputs before it builds helm: with no archive, or
// a registry that carries a password, it says so, and the tool cache is not
// touched (a file stands where it would be, so building helm would fail
// with another error).
func TestChartsPushChecksInputsBeforeHelm(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	data, err := os.ReadFile(filepath.Join(repo, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, pins.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".cache"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ registry, want string }{
		{"127.0.0.1:1/charts", "build the charts first (holdfast charts build)"},
		{"oci://user:s3cret@ghcr.io/charts", "log in with `helm registry login` instead"},
	} {
		code, _, stderr := runCLI(t, "charts", "push", "--root", root, "--registry", tc.registry)
		if code != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "s3cret") {
			t.Errorf("--registry %s: exit %d, stderr:\n%s\nwant exit 1 and %q before any helm build", tc.registry, code, stderr, tc.want)
		}
	}
}

// The release's chart gate: charts packaged with tags are refused once the
// images are built (docs/release.md).
func TestReleaseRefusesChartsWithTags(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	f, err := pins.Load(filepath.Join(repo, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := release.LoadShipped(repo, f)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	in := release.DefaultInputs(root)
	for _, s := range shipped {
		if _, err := imagebuildtest.WriteImages(in.Images, s.Upstream, s.Pin, "c0ffee", nil); err != nil {
			t.Fatal(err)
		}
	}
	pkgs, err := charts.Expected(f, in.Charts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		writeChartArchive(t, p.Path, p.Chart.Name, "image:\n  repository: holdfast-dist/worker-operator\n  tag: x\n"+
			"a:\n  image:\n    repository: holdfast-dist/karmada-controller-manager\n")
	}
	checks := releaseChecks(root, f, shipped, build.Source{Commit: "c0ffee"})
	if err := checks[0](); err != nil {
		t.Fatalf("chart presence gate: %v", err)
	}
	if err := checks[len(checks)-1](); err == nil || !strings.Contains(err.Error(), "by tag, not by the built digest") {
		t.Errorf("chart digest gate: err = %v, want charts with tags refused", err)
	}
}

func writeChartArchive(t *testing.T, path, name, values string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, file := range [][2]string{{name + "/Chart.yaml", "name: " + name + "\n"}, {name + "/values.yaml", values}} {
		if err := tw.WriteHeader(&tar.Header{Name: file[0], Mode: 0o644, Size: int64(len(file[1]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(file[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
