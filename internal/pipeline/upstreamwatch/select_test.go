package upstreamwatch

import (
	"fmt"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

func TestSelect(t *testing.T) {
	pinned := []pins.Pin{{Version: "v1.18.2"}, {Version: "v1.17.1"}, {Version: "v1.16.0"}}
	listed := []string{
		"v1.15.9",                       // an unpinned minor below the pins: dropped
		"v1.16.0",                       // pinned
		"v1.17.1", "v1.17.2", "v1.17.3", // a pinned minor's newer patches: the newest
		"v1.18.0", "v1.18.2", "v1.18.3-rc.0", // a pre-release of a pinned minor
		"v1.19.0-rc.0", "v1.19.0", "v1.19.1", // a new minor: its newest release
		"v1.20.0-alpha.1",                                    // a pre-release only minor
		"v1.19.2-0.20260101000000-abcdefabcdef", "bogus", "", // pseudo-version and junk
	}
	tests := []struct {
		pre  bool
		want string
	}{
		{false, "[{v1.17.3 new patch of pinned v1.17 (pin v1.17.1)} {v1.19.1 new minor v1.19 (newest pin v1.18.2)}]"},
		{true, "[{v1.17.3 new patch of pinned v1.17 (pin v1.17.1)} {v1.18.3-rc.0 new patch of pinned v1.18 (pin v1.18.2)} {v1.19.1 new minor v1.19 (newest pin v1.18.2)} {v1.20.0-alpha.1 new minor v1.20 (newest pin v1.18.2)}]"},
	}
	for _, tt := range tests {
		got := fmt.Sprint(Select(pinned, listed, tt.pre))
		if got != tt.want {
			t.Errorf("pre=%v:\n got %s\nwant %s", tt.pre, got, tt.want)
		}
	}
	if got := Select(pinned, []string{"v1.16.0", "v1.17.1", "v1.18.2"}, true); len(got) != 0 {
		t.Errorf("nothing new: got %v", got)
	}
}
