package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
)

// TestWatch serves pinned v1.2.0 with v1.2.1, v1.3.0 (and v1.4.0, v1.1.0)
// from the fixture plus a v1.4.0-rc.1: the report lists v1.2.1 and v1.3.0
// with their rebase verdicts and skips the rc; a conflicting or
// already-upstream tag is the watch's finding, so it exits 0.
func TestWatch(t *testing.T) {
	fx := fixture(t)
	fx.Proxy.Add(t, pipelinetest.Module, "v1.4.0-rc.1", map[string]string{"pkg/util/client.go": pipelinetest.Versions["v1.3.0"]})
	root := fx.Config.Root
	out := filepath.Join(t.TempDir(), "watch")
	code, stdout, stderr := runCLI(t, "watch", "--root", root, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := []string{
		filepath.Join(out, "watch.md"),
		filepath.Join(out, "watch.json"),
		"up v1.2.1: clean (new patch of pinned v1.2 (pin v1.2.0)): 1 clean, 0 with offset, 0 conflicting, 0 already upstream; series patches/up/1.2",
		"up v1.3.0: offset (new minor v1.3 (newest pin v1.2.0)): 0 clean, 1 with offset, 0 conflicting, 0 already upstream; series patches/up/1.2",
		"up v1.4.0: already upstream (new minor v1.4 (newest pin v1.2.0)): 0 clean, 0 with offset, 0 conflicting, 1 already upstream; series patches/up/1.2",
	}
	if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, strings.Join(want, "\n"))
	}
	if strings.Contains(stdout+stderr, "rc.1") {
		t.Errorf("the release candidate was tried:\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "watch: rebasing up onto v1.2.1") {
		t.Errorf("stderr lacks the progress:\n%s", stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "watch.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The rebase report is the same as `holdfast rebase` prints, with the
	// regression check run on pristine.
	// v1.4.0 has upstream's own fix (Applied-Upstream: v1.4.0) and the
	// regression test passes on its pristine tree.
	for _, w := range []string{
		"| up | v1.2.1 | new patch of pinned v1.2 (pin v1.2.0) | clean |",
		"regression tests FAIL on pristine v1.2.1 as expected",
		"upstream fix present; carried patch superseded Applied-Upstream: v1.4.0, and the regression tests pass on pristine v1.4.0",
	} {
		if !strings.Contains(string(md), w) {
			t.Errorf("watch.md lacks %q:\n%s", w, md)
		}
	}

	code, stdout, _ = runCLI(t, "watch", "--root", root, "--out", out, "--pre-releases", "--upstream", "up")
	if code != 0 || !strings.Contains(stdout, "up v1.4.0: already upstream") || strings.Contains(stdout, "rc.1") {
		t.Errorf("--pre-releases: an rc older than its release must still be skipped: exit %d\n%s", code, stdout)
	}
}

func TestWatchErrors(t *testing.T) {
	fx := fixture(t)
	root := fx.Config.Root
	code, _, stderr := runCLI(t, "watch", "--root", root, "--upstream", "nope")
	if code != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("unknown upstream: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "watch", "--root", root, "extra")
	if code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, %s", code, stderr)
	}
	// A module the proxy does not serve: exit 1, and the report is still
	// written, saying which upstream could not be listed.
	pins := filepath.Join(root, "pins.txt")
	data, _ := os.ReadFile(pins)
	os.WriteFile(pins, []byte(strings.Replace(string(data), "example.com/up", "example.com/missing", 1)), 0o644)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "watch", "--root", root, "--out", out)
	if code != 1 || !strings.Contains(stdout, "up: error: could not list versions") || !strings.Contains(stderr, "holdfast watch: up: go list -m -versions example.com/missing") {
		t.Errorf("missing module: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "watch.md")); err != nil {
		t.Errorf("no report after a listing error: %v", err)
	}
}
