package estimator

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSecretVolumeSwapsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	v, err := newSecretVolume(dir, "kubeconfig", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := v.Publish([]byte("two")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(v.File())
	if err != nil || string(got) != "two" {
		t.Fatalf("File holds %q, %v; want two", got, err)
	}
	if link, _ := os.Readlink(v.File()); link != filepath.Join("..data", "kubeconfig") {
		t.Errorf("File links to %q, want through ..data", link)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the first data folder %s is still there: %v", first, err)
	}
}
