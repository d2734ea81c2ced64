package build_test

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

func buildKind(t *testing.T, tree string, up *pins.Upstream, pristine bool) (*buildinfo.BuildInfo, []byte) {
	t.Helper()
	pin := pins.Pin{Version: "v1.18.2", Revision: 1}
	out := t.TempDir()
	bins, err := build.Build(context.Background(), build.Options{
		Tree: tree, Upstream: up, Pin: pin, Out: out, Pristine: pristine,
		Stamp: build.Stamp{Version: "v1.18.2-holdfast.1", SeriesHash: seriesHash, Source: build.Source{Commit: "abc", Date: time.Unix(1764672000, 0)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(bins[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bins[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("output folder holds %d entries, want only the binaries' (the git checkout is removed)", len(entries))
	}
	return info, data
}

// TestBuildRecordsUpstreamModuleVersion: the binaries' build information
// names the upstream module at a version scanners can match and order: a
// patched build after the pin's tag and before the next releases, a
// pristine build at the tag itself; the same inputs give the same bytes.
func TestBuildRecordsUpstreamModuleVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	tree, up := toolchainTree(t)
	up.Module = "example.com/up"

	info, data := buildKind(t, tree, up, false)
	v := info.Main.Version
	if info.Main.Path != up.Module || !module.IsPseudoVersion(v) {
		t.Fatalf("patched build records main module %s %s, want %s at a pseudo-version", info.Main.Path, v, up.Module)
	}
	if base, _ := module.PseudoVersionBase(v); base != "v1.18.2" {
		t.Errorf("patched build's version %s is based on %q, want v1.18.2", v, base)
	}
	if ts, _ := module.PseudoVersionTime(v); !ts.Equal(time.Unix(1764672000, 0)) {
		t.Errorf("patched build's version %s has time %v, want the build date", v, ts)
	}
	for _, c := range []struct {
		other string
		want  int
	}{{"v1.18.2", 1}, {"v1.18.1", 1}, {"v1.18.3", -1}, {"v1.19.0", -1}, {"v1.19.0-rc.0", -1}} {
		if got := semver.Compare(v, c.other); got != c.want {
			t.Errorf("semver.Compare(%s, %s) = %d, want %d", v, c.other, got, c.want)
		}
	}
	if setting(info, "vcs.modified") != "false" {
		t.Errorf("vcs.modified = %q, want false (the checkout is committed whole)", setting(info, "vcs.modified"))
	}
	// The release gate accepts it.
	if err := build.CheckMainModule(info, up.Module, "v1.18.2"); err != nil {
		t.Errorf("CheckMainModule: %v", err)
	}
	if err := build.CheckMainModule(info, up.Module, "v1.18.1"); err == nil {
		t.Errorf("CheckMainModule accepted a binary of v1.18.2 for v1.18.1")
	}

	_, again := buildKind(t, tree, up, false)
	if !bytes.Equal(data, again) {
		t.Errorf("two builds of the same inputs differ")
	}

	pristine, _ := buildKind(t, tree, up, true)
	if pristine.Main.Path != up.Module || pristine.Main.Version != "v1.18.2" {
		t.Errorf("pristine build records %s %s, want %s v1.18.2", pristine.Main.Path, pristine.Main.Version, up.Module)
	}
	if err := build.CheckMainModule(pristine, up.Module, "v1.18.2"); err == nil || !strings.Contains(err.Error(), "not at a pseudo-version") {
		t.Errorf("CheckMainModule of a pristine build: err = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(tree, ".git")); err == nil {
		t.Errorf("the build left a .git in the tree")
	}
}
