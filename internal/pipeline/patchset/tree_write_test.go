package patchset

import (
	"os"
	"path/filepath"
	"testing"
)

// Write deletes a file that is already gone without complaint and goes on
// to the changes after it.
func TestWriteAfterDeletingAMissingFile(t *testing.T) {
	dir := tree(t, map[string]string{"b.txt": "old\n"})
	tr := NewTree(dir)
	tr.changed["a.txt"] = &fileState{deleted: true}
	tr.changed["b.txt"] = &fileState{data: []byte("new\n"), mode: 0o644}
	if err := tr.Write(); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "b.txt"))
	if err != nil || string(got) != "new\n" {
		t.Errorf("b.txt after Write: %q, %v; want %q", got, err, "new\n")
	}
}

// A deletion that fails for another reason than absence is an error.
func TestWriteReportsAFailedDeletion(t *testing.T) {
	dir := tree(t, nil)
	if err := os.MkdirAll(filepath.Join(dir, "d", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr := NewTree(dir)
	// A non-empty folder cannot be removed with os.Remove.
	tr.changed["d"] = &fileState{deleted: true}
	if err := tr.Write(); err == nil {
		t.Error("Write: nil error for a deletion that failed")
	}
}
