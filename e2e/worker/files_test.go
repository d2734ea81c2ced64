package worker

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCopyLogsKeepsOnlyLogs(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	files := map[string]string{
		"hub-a/logs/kube-apiserver.log": "started",
		"hub-a/audit.log":               "{}",
		"hub-a/certs/ca.key":            "secret",
		"credentials/hub-a.token":       "secret",
		"logs/failover-1.log":           "worker",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyLogs(src, dst); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(dst, name))
		wantCopied := filepath.Ext(name) == ".log"
		if copied := err == nil; copied != wantCopied {
			t.Errorf("%s copied = %v, want %v", name, copied, wantCopied)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	for _, content := range []string{"first", "second"} {
		if err := writeFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("after writing %q the file holds %q (%v)", content, got, err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("a token file is mode %v, want 0600", perm)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the token: %v", entries)
	}
}
