package node

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWeighCPUGivesThePodsSeveralProcessesWorth: in either cgroup version
// the node's cgroupRoot weighs podsCPUWeight processes, not the one
// process a new cgroup weighs, and a hierarchy without the cpu
// controller's files gets none written.
func TestWeighCPUGivesThePodsSeveralProcessesWorth(t *testing.T) {
	for _, tc := range []struct{ file, initial, want string }{
		{"cpu.shares", "1024", "8192"}, // cgroup v1
		{"cpu.weight", "100", "800"},   // cgroup v2
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(tc.initial), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := weighCPU(dir); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s = %s, want %s (%d processes' worth)", tc.file, got, tc.want, podsCPUWeight)
		}
	}
	other := t.TempDir()
	if err := weighCPU(other); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("weighCPU wrote %s in a hierarchy without the cpu controller", entries[0].Name())
	}
}
