package progress

import (
	"bytes"
	"testing"
	"time"
)

// TestHeartbeat drives the heartbeat with its own ticks: one
// line per tick with the time elapsed since start, nothing after stop.
func TestHeartbeat(t *testing.T) {
	var out bytes.Buffer
	begin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ticks := make(chan time.Time) // unbuffered: a send returns once the heartbeat took the tick
	stopped := 0
	stop := start(&out, "building karmada-controller-manager for linux/arm64", begin, ticks, func() { stopped++ })

	ticks <- begin.Add(30 * time.Second)
	ticks <- begin.Add(2*time.Minute + 400*time.Millisecond)
	stop()
	stop() // a second stop is harmless

	want := "  still building karmada-controller-manager for linux/arm64 (30s elapsed)\n" +
		"  still building karmada-controller-manager for linux/arm64 (2m0s elapsed)\n"
	if out.String() != want {
		t.Errorf("heartbeat wrote\n%q\nwant\n%q", out.String(), want)
	}
	if stopped != 1 {
		t.Errorf("ticker stopped %d times, want once", stopped)
	}
	select {
	case ticks <- begin:
		t.Error("the heartbeat still takes ticks after stop")
	default:
	}
}

// TestHeartbeatQuietStep: a step that ends before the first tick prints
// nothing, and a nil writer is allowed.
func TestHeartbeatQuietStep(t *testing.T) {
	var out bytes.Buffer
	Start(&out, "building")()
	if out.Len() != 0 {
		t.Errorf("a step shorter than Interval printed %q", out.String())
	}
	Start(nil, "building")()
}
