// Package progress tells whoever watches a long step that it is still
// running. The go command holds a build's output until the build ends, and
// a cold Karmada build or cross-build is silent for minutes; a line every
// Interval with the time elapsed says the step is alive without flooding a
// CI log. The lines are progress, not results: callers write them where
// they write their logs (holdfast's stderr), never to stdout.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Interval is how often a heartbeat line is printed. Thirty seconds keeps
// a 10-minute cold cross-build of Karmada to about 20 lines in a CI log,
// tells a person at a terminal within half a minute that nothing hangs,
// and stays well under the minutes-long no-output timeouts some CI runners
// kill a job at. Steps shorter than Interval print nothing.
const Interval = 30 * time.Second

// Start prints "  still WHAT (ELAPSED elapsed)" to w every Interval until
// the returned stop is called; stop waits for a line being written, so
// nothing is written after it returns, and may be called more than once.
// A nil w prints nothing.
func Start(w io.Writer, what string) (stop func()) {
	return StartEvery(w, what, Interval)
}

// StartEvery is Start with another interval; zero or less means Interval.
// Callers expose it so their tests see a heartbeat in milliseconds rather
// than in 30 seconds.
func StartEvery(w io.Writer, what string, every time.Duration) (stop func()) {
	if w == nil {
		return func() {}
	}
	if every <= 0 {
		every = Interval
	}
	t := time.NewTicker(every)
	return start(w, what, time.Now(), t.C, t.Stop)
}

// start is Start with the ticks injected, for tests. Elapsed time is the
// tick's time less begin: a ticker sends the time it fired.
func start(w io.Writer, what string, begin time.Time, ticks <-chan time.Time, stopTicks func()) func() {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case at := <-ticks:
				fmt.Fprintf(w, "  still %s (%s elapsed)\n", what, at.Sub(begin).Round(time.Second))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			stopTicks()
			close(done)
			<-finished
		})
	}
}
