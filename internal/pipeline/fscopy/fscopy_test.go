package fscopy

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readOnlyTree lays out a tree the way the Go module cache does: files 0444
// (one 0555), folders 0555.
func readOnlyTree(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	files := map[string]fs.FileMode{"a.go": 0o444, "sub/b.txt": 0o444, "hack/run.sh": 0o555}
	for name, mode := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+name), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sub", "hack", "."} {
		if err := os.Chmod(filepath.Join(src, d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	// Let t.TempDir clean up.
	t.Cleanup(func() {
		for _, d := range []string{"sub", "hack", "."} {
			os.Chmod(filepath.Join(src, d), 0o755)
		}
	})
	return src
}

func TestTreeMakesWritableCopies(t *testing.T) {
	src := readOnlyTree(t)
	dst := filepath.Join(t.TempDir(), "out")
	written, err := Tree(dst, src, Options{})
	if err != nil {
		t.Fatalf("Tree: %v", err)
	}
	if want := []string{"a.go", "hack/run.sh", "sub/b.txt"}; !reflect.DeepEqual(written, want) {
		t.Errorf("written = %v, want %v", written, want)
	}
	wantModes := map[string]fs.FileMode{"a.go": 0o644, "sub/b.txt": 0o644, "hack/run.sh": 0o755}
	for name, want := range wantModes {
		info, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", name, got, want)
		}
		data, _ := os.ReadFile(filepath.Join(dst, name))
		if string(data) != "content of "+name {
			t.Errorf("%s: content %q", name, data)
		}
	}
	// A second copy over the first replaces the files in place.
	if _, err := Tree(dst, src, Options{}); err != nil {
		t.Errorf("second Tree over the first: %v", err)
	}
}

func TestTreeOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		prepare func(t *testing.T, src, dst string)
		wantErr string
		check   func(t *testing.T, dst string)
	}{
		{
			name: "no replace refuses an existing file",
			opts: Options{NoReplace: true},
			prepare: func(t *testing.T, src, dst string) {
				os.MkdirAll(filepath.Join(dst, "sub"), 0o755)
				os.WriteFile(filepath.Join(dst, "sub", "b.txt"), []byte("upstream"), 0o644)
			},
			wantErr: "sub/b.txt would replace",
		},
		{
			name:    "symlinks are refused",
			prepare: func(t *testing.T, src, dst string) { os.Symlink("a.go", filepath.Join(src, "link.go")) },
			wantErr: "link.go: not a regular file",
		},
		{
			name: "transform sees the relative path",
			opts: Options{Transform: func(rel string, data []byte) ([]byte, error) {
				return bytes.ToUpper(append([]byte(rel+":"), data...)), nil
			}},
			check: func(t *testing.T, dst string) {
				data, _ := os.ReadFile(filepath.Join(dst, "sub", "b.txt"))
				if string(data) != "SUB/B.TXT:CONTENT OF SUB/B.TXT" {
					t.Errorf("transformed content = %q", data)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := t.TempDir()
			os.MkdirAll(filepath.Join(src, "sub"), 0o755)
			os.WriteFile(filepath.Join(src, "a.go"), []byte("content of a.go"), 0o644)
			os.WriteFile(filepath.Join(src, "sub", "b.txt"), []byte("content of sub/b.txt"), 0o644)
			dst := t.TempDir()
			if tt.prepare != nil {
				tt.prepare(t, src, dst)
			}
			_, err := Tree(dst, src, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, dst)
			}
		})
	}
}

func TestFiles(t *testing.T) {
	src := readOnlyTree(t)
	got, err := Files(src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go", "hack/run.sh", "sub/b.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	if got, err := Files(filepath.Join(src, "missing")); err != nil || got != nil {
		t.Errorf("Files(missing) = %v, %v; want nil, nil", got, err)
	}
}

func TestWriteFileReplacesReadOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o444); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(p)
	data, _ := os.ReadFile(p)
	if string(data) != "new" || info.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v, want \"new\" 0644", data, info.Mode().Perm())
	}
}
