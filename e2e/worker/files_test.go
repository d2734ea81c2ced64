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

// TestCAVolumeSwapsDataLink: the worker's path keeps its name and follows
// each Publish, through a ..data symlink swapped in one rename, and the
// folder of the previous content is gone, as after a kubelet update.
func TestCAVolumeSwapsDataLink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub-ca")
	v, err := newCAVolume(dir, []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(v.File()); err != nil || string(got) != "first" {
		t.Fatalf("after newCAVolume: %q, %v; want first", got, err)
	}
	if target, err := os.Readlink(v.File()); err != nil || target != filepath.Join("..data", caVolumeKey) {
		t.Fatalf("%s links to %q (%v), want through ..data", v.File(), target, err)
	}
	firstData, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Publish([]byte("second")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(v.File()); err != nil || string(got) != "second" {
		t.Fatalf("after Publish: %q, %v; want second", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, firstData)); !os.IsNotExist(err) {
		t.Fatalf("the first content's folder %s is still there (%v)", firstData, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 { // ca.crt, ..data, one timestamped folder
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("volume holds %v, want ca.crt, ..data and one data folder", names)
	}
}
