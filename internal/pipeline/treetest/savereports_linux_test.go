package treetest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSaveReportsRefusesAHalfWrittenReport: when writing a report fails
// (here the file size limit, RLIMIT_FSIZE, stops the JSON part way), the
// error is returned and no report of that name appears. Not parallel: the
// limit holds for the whole test process while it is set.
func TestSaveReportsRefusesAHalfWrittenReport(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("no RLIMIT_FSIZE: %v", err)
	}
	dir := t.TempDir()
	r := reportResult("v1.0.0", nil, []string{strings.Repeat("x", 64*1024)})
	// The Go runtime ignores SIGXFSZ, so a write past the limit fails with
	// EFBIG instead of ending the process.
	lim := syscall.Rlimit{Cur: 16 * 1024, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
	}
	_, err := SaveReports(dir, "test-up", []*Result{r})
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatalf("restoring RLIMIT_FSIZE: %v", rerr)
	}
	if err == nil {
		t.Error("SaveReports: no error for a report it could not write")
	}
	if _, serr := os.Stat(filepath.Join(dir, "test-up.json")); !os.IsNotExist(serr) {
		t.Errorf("test-up.json after a failed write: %v, want it absent", serr)
	}
}
