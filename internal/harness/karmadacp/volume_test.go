package karmadacp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSecretVolumePublish: the layout is the kubelet's (key -> ..data/key,
// ..data -> a timestamped folder), a reader of the key's path sees the new
// content after Publish, and the old folder is gone.
func TestSecretVolumePublish(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	v, err := NewSecretVolume(dir, map[string][]byte{"kubeconfig": []byte("one")})
	if err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(v.File("kubeconfig")); err != nil || target != filepath.Join("..data", "kubeconfig") {
		t.Fatalf("key symlink: %q, %v", target, err)
	}
	first, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Publish(map[string][]byte{"kubeconfig": []byte("two")}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(v.File("kubeconfig")); err != nil || string(got) != "two" {
		t.Errorf("after Publish: %q, %v", got, err)
	}
	second, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || second == first {
		t.Errorf("..data %q after Publish, was %q (%v)", second, first, err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the old folder %s is still there: %v", first, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "..data_tmp")); !os.IsNotExist(err) {
		t.Errorf("..data_tmp left behind: %v", err)
	}
}
