package repofiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// TestRepositoryTracksNoBuildOutput is the check itself: it fails `make test`
// when a binary, an oversized file or a stray executable bit is committed.
func TestRepositoryTracksNoBuildOutput(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Fatalf("%s is not a git checkout (%v): this check reads what git tracks; run it from a clone", root, err)
	}
	findings, err := Check(root, Fixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("tracked file breaks a rule: %s", f)
	}
}

func TestCheckFindsBinariesLargeFilesAndStrayExecutables(t *testing.T) {
	root := gitRepo(t, map[string]file{
		"README.md":            {data: "# hello\n"},
		"holdfast":             {data: "\x7fELF\x02\x01\x01rest of a binary", mode: 0o755},
		"tool.exe":             {data: "MZ\x90\x00"},
		"hack/run.sh":          {data: "#!/bin/sh\necho hi\n", mode: 0o755},
		"hack/notes.txt":       {data: "not a script\n", mode: 0o755},
		"big.json":             {data: strings.Repeat("x", MaxSize+1)},
		"exactly.json":         {data: strings.Repeat("x", MaxSize)},
		"testdata/golden.bin":  {data: strings.Repeat("y", MaxSize+10)},
		"testdata/ok/small.go": {data: "package ok\n"},
	})
	fixtures := map[string]string{
		"testdata/golden.bin": "a golden file the test cannot regenerate",
		"testdata/gone.bin":   "stale entry",
	}
	findings, err := Check(root, fixtures)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range findings {
		got[f.Path] = f.Reason
	}
	want := map[string]string{
		"holdfast":          "ELF",
		"tool.exe":          "PE",
		"hack/notes.txt":    "executable bit",
		"big.json":          "over the",
		"testdata/gone.bin": "not tracked",
	}
	for path, substr := range want {
		if !strings.Contains(got[path], substr) {
			t.Errorf("%s: finding %q, want one mentioning %q", path, got[path], substr)
		}
	}
	for path, reason := range got {
		if _, ok := want[path]; !ok {
			t.Errorf("%s: unexpected finding %q", path, reason)
		}
	}
}

func TestCheckOutsideGitSaysSo(t *testing.T) {
	_, err := Check(t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "git ls-files") {
		t.Fatalf("Check outside a git checkout: err = %v, want one naming git ls-files", err)
	}
}

type file struct {
	data string
	mode os.FileMode
}

func gitRepo(t *testing.T, files map[string]file) string {
	t.Helper()
	root := t.TempDir()
	for name, f := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, []byte(f.data), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}
