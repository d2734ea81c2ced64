package karmada

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKarmadaVersion(t *testing.T) {
	tests := []struct {
		name, out, want, wantErr string
	}{
		{
			name: "patched build carries holdfast's commit and series",
			out:  `karmada-controller-manager version: version.Info{GitVersion:"v1.18.2-holdfast.2", GitShortCommit:"fb5a8efc9392", GitCommit:"holdfast:fb5a8efc9392,series:9710415113c3", GitTreeState:"clean", BuildDate:"2026-12-02T11:34:34Z", GoVersion:"go1.26.8", Compiler:"gc", Platform:"linux/amd64"}`,
			want: "v1.18.2-holdfast.2 (holdfast:fb5a8efc9392,series:9710415113c3)",
		},
		{
			name: "pristine build has upstream's version only",
			out:  `karmada-controller-manager version: version.Info{GitVersion:"v1.18.2", GitShortCommit:"", GitCommit:"", GitTreeState:"", BuildDate:"", GoVersion:"go1.26.8", Compiler:"gc", Platform:"linux/amd64"}` + "\n",
			want: "v1.18.2",
		},
		{name: "no version", out: "unknown command \"version\"", wantErr: "no GitVersion"},
		{name: "empty version", out: `version.Info{GitVersion:""}`, wantErr: "no GitVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKarmadaVersion(tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseKarmadaVersion() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseKarmadaVersion() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestTargetControllerManager(t *testing.T) {
	root := t.TempDir()
	pinsTxt := "upstream karmada github.com/karmada-io/karmada\n" +
		"\tbuild ./cmd/controller-manager=karmada-controller-manager\n" +
		"\tpin v1.18.2 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.18 revision=2 default\n" +
		"\tpin v1.17.1 h1:gNjjEYUQr1aFgqcMiqQVZYWmnAAXhfXZoTbPJ5pala0= series=patches/karmada/1.17 revision=2\n"
	if err := os.WriteFile(filepath.Join(root, "pins.txt"), []byte(pinsTxt), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	t.Setenv(BinDirEnv, bin)
	patched := filepath.Join(bin, "karmada-v1.18.2", "karmada-controller-manager")
	if err := os.MkdirAll(filepath.Dir(patched), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(patched, nil, 0o755); err != nil {
		t.Fatal(err)
	}

	target, err := LoadTarget(root)
	if err != nil {
		t.Fatal(err)
	}
	if target.Version != "v1.18.2" {
		t.Errorf("Version = %q, want the default pin v1.18.2", target.Version)
	}
	if want := filepath.Join(root, "_output", "trees", "karmada-v1.18.2"); target.Tree != want {
		t.Errorf("Tree = %q, want %q", target.Tree, want)
	}
	if got, err := target.ControllerManager(Patched); err != nil || got != patched {
		t.Errorf("ControllerManager(Patched) = %q, %v; want %q", got, err, patched)
	}
	// The pristine one was not built: the error says how to build it.
	_, err = target.ControllerManager(Pristine)
	if err == nil || !strings.Contains(err.Error(), "make binaries") || !strings.Contains(err.Error(), "--pristine") ||
		!strings.Contains(err.Error(), "karmada-v1.18.2-pristine") {
		t.Errorf("ControllerManager(Pristine) error = %v, want one naming the pristine folder and how to build it", err)
	}
	if err := target.CheckTree(); err == nil || !strings.Contains(err.Error(), "make binaries") {
		t.Errorf("CheckTree() = %v, want an error saying how to build the tree", err)
	}
}
