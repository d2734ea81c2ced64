package node

import (
	"strings"
	"testing"
)

func TestHostSnapshotDiff(t *testing.T) {
	before := hostSnapshot{"sysctl vm.overcommit_memory": "0", "ip netns list": ""}
	after := hostSnapshot{"sysctl vm.overcommit_memory": "1", "ip netns list": "", "cgroup folders in /sys/fs/cgroup/pids": "holdfast-node-1"}
	d := before.diff(after)
	if len(d) != 2 || !strings.Contains(d[0], "cgroup folders") || !strings.Contains(d[1], `before "0", after "1"`) {
		t.Errorf("diff = %q, want the new cgroup folder and the changed sysctl", d)
	}
	if d := before.diff(before); len(d) != 0 {
		t.Errorf("a snapshot differs from itself: %q", d)
	}
}
