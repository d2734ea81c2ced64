package karmadacp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

func TestEnsureBinariesRejects(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureBinaries(context.Background(), root, "upstream", nil); err == nil || !strings.Contains(err.Error(), "want patched or pristine") {
		t.Errorf("unknown build: got %v", err)
	}
	// A repository with the pins but no controller-manager built says how
	// to build it, before building anything else.
	empty := t.TempDir()
	data, err := os.ReadFile(filepath.Join(root, "pins.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "pins.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinDirEnv, "")
	_, err = EnsureBinaries(context.Background(), empty, Pristine, nil)
	if err == nil || !strings.Contains(err.Error(), "make e2e-karmada-cp") || !strings.Contains(err.Error(), "--pristine") {
		t.Errorf("missing controller-manager: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, ".cache")); err == nil {
		t.Error("built something although the binary under test is missing")
	}
}
