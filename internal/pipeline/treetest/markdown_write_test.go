package treetest

import (
	"errors"
	"testing"
)

// failingWriter refuses every write, as a full disk does.
type failingWriter struct{}

var errDiskFull = errors.New("no space left on device")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// TestWriteMarkdownReportsWriteErrors: SaveReports renames the temporary
// file into place when the writer returns nil, so a report that could not be
// written must say so, or a truncated report replaces a good one.
func TestWriteMarkdownReportsWriteErrors(t *testing.T) {
	err := WriteMarkdown(failingWriter{}, []*Result{reportResult("v1.0.0", nil, nil)})
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("WriteMarkdown to a writer that fails: error %v, want %v", err, errDiskFull)
	}
}
