package progress

import (
	"bytes"
	"strings"
	"sync"
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

// syncWriter counts the lines the heartbeat's goroutine writes.
type syncWriter struct {
	mu    sync.Mutex
	lines []string
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func (w *syncWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

// TestStartEvery: a caller's interval is used (rebase and watch tests pass
// a millisecond), and nothing is written after stop.
func TestStartEvery(t *testing.T) {
	w := &syncWriter{}
	stop := StartEvery(w, "downloading", time.Millisecond)
	deadline := time.Now().Add(time.Minute)
	for w.count() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := w.count()
	if n < 2 {
		t.Fatalf("%d heartbeat lines in a minute at a 1ms interval", n)
	}
	if !strings.HasPrefix(w.lines[0], "  still downloading (") {
		t.Errorf("line %q", w.lines[0])
	}
	time.Sleep(10 * time.Millisecond)
	if w.count() != n {
		t.Errorf("%d lines written after stop", w.count()-n)
	}
}
