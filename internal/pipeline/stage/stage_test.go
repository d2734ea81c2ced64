package stage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// builder writes files and counts its calls.
type builder struct {
	files map[string]string
	fail  error
	calls int
}

func (b *builder) build(dir string) error {
	b.calls++
	for name, content := range b.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return b.fail
}

// siblings lists what is beside the destination, lock file excluded.
func siblings(t *testing.T, dest string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dest))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestEnsure(t *testing.T) {
	v1 := map[string]string{"a.go": "package a\n", "sub/b.txt": "b"}
	v2 := map[string]string{"a.go": "package a // v2\n"}
	tests := []struct {
		name string
		// before runs first (may be nil); then Ensure runs with key and b.
		before     func(t *testing.T, dest string)
		key        string
		files      map[string]string
		fail       error
		wantErr    bool
		wantReused bool
		wantReason string
		wantFiles  map[string]string // content of dest after Ensure
	}{
		{
			name: "first build", key: "k1", files: v1,
			wantReason: "no tree yet", wantFiles: v1,
		},
		{
			name:   "same inputs reuse the tree",
			before: ensured("k1", v1), key: "k1", files: v2,
			wantReused: true, wantFiles: v1,
		},
		{
			name:   "changed inputs rebuild",
			before: ensured("k1", v1), key: "k2", files: v2,
			wantReason: "inputs changed", wantFiles: v2,
		},
		{
			name: "edited tree is rebuilt",
			before: func(t *testing.T, dest string) {
				ensured("k1", v1)(t, dest)
				os.WriteFile(filepath.Join(dest, "a.go"), []byte("package a // edited\n"), 0o644)
			},
			key: "k1", files: v1,
			wantReason: "the tree was modified after it was built", wantFiles: v1,
		},
		{
			name: "unstamped folder is rebuilt",
			before: func(t *testing.T, dest string) {
				os.MkdirAll(dest, 0o755)
				os.WriteFile(filepath.Join(dest, "a.go"), []byte("package a // by hand\n"), 0o644)
			},
			key: "k1", files: v1,
			wantReason: "the tree has no readable stamp", wantFiles: v1,
		},
		{
			name: "failed first build leaves no tree", key: "k1", files: v1, fail: errors.New("hunk #2 does not apply"),
			wantErr: true,
		},
		{
			name:   "failed rebuild leaves the old tree",
			before: ensured("k1", v1), key: "k2", files: v2, fail: errors.New("hunk #2 does not apply"),
			wantErr: true, wantFiles: v1,
		},
		{
			name: "leftovers of a killed run are removed",
			before: func(t *testing.T, dest string) {
				os.MkdirAll(filepath.Join(filepath.Dir(dest), ".tree.partial-123", "half"), 0o755)
			},
			key: "k1", files: v1,
			wantReason: "no tree yet", wantFiles: v1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "tree")
			if tt.before != nil {
				tt.before(t, dest)
			}
			b := &builder{files: tt.files, fail: tt.fail}
			out, err := Ensure(dest, tt.key, b.build)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Ensure err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil {
				if out.Reused != tt.wantReused || out.Reason != tt.wantReason {
					t.Errorf("outcome = %+v, want reused=%v reason=%q", out, tt.wantReused, tt.wantReason)
				}
				if out.Reused == (b.calls > 0) {
					t.Errorf("build called %d times with reused=%v", b.calls, out.Reused)
				}
			}
			if tt.wantFiles == nil {
				if _, err := os.Stat(dest); !os.IsNotExist(err) {
					t.Errorf("a tree exists after a failed first build: %v", err)
				}
			} else {
				assertTree(t, dest, tt.wantFiles)
			}
			// Only the destination (if any) remains: no partial or old folders.
			for _, name := range siblings(t, dest) {
				if name != "tree" {
					t.Errorf("left behind: %s", name)
				}
			}
		})
	}
}

func ensured(key string, files map[string]string) func(t *testing.T, dest string) {
	return func(t *testing.T, dest string) {
		t.Helper()
		if _, err := Ensure(dest, key, (&builder{files: files}).build); err != nil {
			t.Fatal(err)
		}
	}
}

func assertTree(t *testing.T, dest string, want map[string]string) {
	t.Helper()
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || string(got) != content {
			t.Errorf("%s = %q, %v; want %q", name, got, err, content)
		}
	}
	var n int
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != StampFile {
			n++
		}
		return nil
	})
	if n != len(want) {
		t.Errorf("tree has %d files, want %d", n, len(want))
	}
}

// The same inputs give the same content wherever the tree is built.
func TestHashIsDeterministic(t *testing.T) {
	files := map[string]string{"a.go": "package a\n", "sub/b.txt": "b"}
	var hashes []string
	for range 2 {
		out, err := Ensure(filepath.Join(t.TempDir(), "tree"), "k", (&builder{files: files}).build)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, out.TreeHash)
	}
	if hashes[0] != hashes[1] || !strings.HasPrefix(hashes[0], "h1:") {
		t.Errorf("tree hashes differ: %v", hashes)
	}
}

// Concurrent runs on one destination build once and both see a finished tree.
func TestEnsureConcurrent(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "tree")
	var mu sync.Mutex
	calls := 0
	build := func(dir string) error {
		mu.Lock()
		calls++
		mu.Unlock()
		return os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Ensure(dest, "k", build)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("built %d times, want 1", calls)
	}
	assertTree(t, dest, map[string]string{"a": "a"})
}
