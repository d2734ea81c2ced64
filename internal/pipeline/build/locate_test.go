package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocateDefault(t *testing.T) {
	root := t.TempDir()
	pinsTxt := "upstream karmada github.com/karmada-io/karmada\n" +
		"\tbuild ./cmd/controller-manager=karmada-controller-manager\n" +
		"\tpin v1.18.2 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.18 revision=2 default\n" +
		"\tpin v1.17.1 h1:gNjjEYUQr1aFgqcMiqQVZYWmnAAXhfXZoTbPJ5pala0= series=patches/karmada/1.17 revision=2\n"
	if err := os.WriteFile(filepath.Join(root, "pins.txt"), []byte(pinsTxt), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinDirEnv, "")
	b, err := LocateDefault(root, "karmada", true)
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "v1.18.2" || b.Kind() != "pristine" {
		t.Errorf("Version %q Kind %q, want the default pin's pristine build", b.Version, b.Kind())
	}
	if want := filepath.Join(root, "_output", "trees", "karmada-v1.18.2-pristine"); b.Tree != want {
		t.Errorf("Tree = %s, want %s", b.Tree, want)
	}
	if want := filepath.Join(root, "_output", "bin", "karmada-v1.18.2-pristine"); b.Dir != want {
		t.Errorf("Dir = %s, want %s", b.Dir, want)
	}
	_, err = b.Binary("karmada-controller-manager")
	var missing *MissingBinaryError
	if !errors.As(err, &missing) {
		t.Fatalf("missing binary: err = %v, want a MissingBinaryError", err)
	}
	for _, want := range []string{"make binaries", "--upstream karmada --only karmada-controller-manager --pristine", b.Dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// BinDirEnv points at binaries built elsewhere.
	bin := t.TempDir()
	t.Setenv(BinDirEnv, bin)
	b, err = LocateDefault(root, "karmada", false)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(bin, "karmada-v1.18.2", "karmada-controller-manager")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Binary("karmada-controller-manager"); err != nil || got != path {
		t.Errorf("Binary = %q, %v; want %s", got, err, path)
	}
	if _, err := LocateDefault(root, "kubeslice", false); err == nil {
		t.Error("an upstream pins.txt does not list was located")
	}
}
