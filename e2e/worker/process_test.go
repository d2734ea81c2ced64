//go:build e2e

package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/logtail"
)

// runningWorker is one worker-operator process.
type runningWorker struct {
	proc        *controlplane.Process
	metricsAddr string
	started     time.Time
}

// stopGrace is how long a SIGTERMed worker may drain before SIGKILL:
// controller-runtime's default graceful shutdown timeout (30s), which bounds
// the worker's own drain.
const stopGrace = 30 * time.Second

// startWorker starts bin with settings; its log goes to the environment's
// logs folder under name. The test stops it (SIGTERM) if it still runs at
// the end, and quotes its last lines if the test failed.
func (e *environment) startWorker(t *testing.T, name string, bin workerBinary, s workerSettings) *runningWorker {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	w := &runningWorker{metricsAddr: fmt.Sprintf("127.0.0.1:%d", port), started: time.Now()}
	w.proc, err = controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
		Name:    "worker-operator (" + name + ")",
		Path:    bin.Path,
		Args:    workerArgs(w.metricsAddr),
		Env:     s.env(),
		LogFile: filepath.Join(e.dir, "logs", name+".log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.recordBuild(w, bin)
	t.Cleanup(func() {
		if err := w.proc.Stop(stopGrace); err != nil {
			t.Errorf("stopping %s: %v", w.proc.Name(), err)
		}
		if t.Failed() {
			t.Logf("%s, last lines of %s:\n%s", w.proc.Name(), w.proc.LogFile(), logtail.Last(w.proc.LogFile(), 25))
		}
	})
	return w
}

// recordBuild records the version of bin for the report, once per binary:
// a holdfast build says which release and patch series it is in its first
// log line ("holdfast build", version, seriesHash); a pristine one cannot.
func (e *environment) recordBuild(w *runningWorker, bin workerBinary) {
	key := "worker-operator (patched)"
	if bin.Pristine {
		key = "worker-operator (pristine)"
	}
	e.mu.Lock()
	_, done := e.versions[key]
	e.mu.Unlock()
	if done {
		return
	}
	version := bin.Version
	if !bin.Pristine {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		line, err := w.proc.WaitForLogMatch(ctx, buildLine)
		var build struct{ Version, SeriesHash string }
		if err != nil || json.Unmarshal([]byte(line), &build) != nil || build.Version == "" {
			return // the scenario's own checks report a worker that does not start
		}
		version = build.Version + " (series " + build.SeriesHash + ")"
	}
	e.mu.Lock()
	e.versions[key] = version
	e.mu.Unlock()
}

// buildLine is the worker's first log line in a holdfast build.
var buildLine = regexp.MustCompile(`"message":"holdfast build"`)

// errExited says the worker ended while a scenario expected it to run.
func (w *runningWorker) errExited() error {
	return fmt.Errorf("%s exited with code %d; last lines:\n%s", w.proc.Name(), w.proc.ExitCode(), logtail.Last(w.proc.LogFile(), 15))
}

// waitUntil polls cond every pollEvery until it holds, failing when bound
// passes or, if w is not nil, when the worker exits first: a worker that
// crashed is never worth waiting out.
func waitUntil(ctx context.Context, w *runningWorker, what string, cond func(context.Context) (bool, error)) error {
	const pollEvery = 50 * time.Millisecond // well below every interval measured here; a loopback GET costs ~1ms
	var last error
	err := wait.PollUntilContextTimeout(ctx, pollEvery, bound, true, func(ctx context.Context) (bool, error) {
		if w != nil && w.proc.Exited() {
			return false, w.errExited()
		}
		ok, err := cond(ctx)
		if err != nil {
			last = err // transient (an API server restarting, a scrape racing startup): retried
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, last)
		}
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// waitReconciled waits until the worker has reconciled its Cluster on h,
// i.e. its hub manager is connected to h.
func (w *runningWorker) waitReconciled(ctx context.Context, h *hub) error {
	return waitUntil(ctx, w, "the worker to reconcile its Cluster on "+h.name, h.reconciledByWorker)
}

// metrics scrapes the worker's /metrics.
func (w *runningWorker) metrics(ctx context.Context) (metricSamples, error) {
	return scrapeMetrics(ctx, w.metricsAddr)
}

// waitMetric waits until the worker exposes series with a value ok accepts,
// and returns that value.
func (w *runningWorker) waitMetric(ctx context.Context, series string, ok func(float64) bool) (float64, error) {
	var v float64
	err := waitUntil(ctx, w, series, func(ctx context.Context) (bool, error) {
		m, err := w.metrics(ctx)
		if err != nil {
			return false, err
		}
		var found bool
		v, found = m.value(series)
		return found && ok(v), nil
	})
	return v, err
}

// countLog counts the worker's log lines containing substr.
func (w *runningWorker) countLog(substr string) int {
	return strings.Count(w.proc.Log(), substr)
}

// waitExit waits up to limit for the worker to exit on its own.
func (w *runningWorker) waitExit(limit time.Duration) (time.Time, error) {
	select {
	case <-w.proc.Done():
		return time.Now(), nil
	case <-time.After(limit):
		return time.Time{}, fmt.Errorf("%s still runs %s later; last lines:\n%s", w.proc.Name(), limit, logtail.Last(w.proc.LogFile(), 15))
	}
}

// atLeast and equals build waitMetric conditions.
func atLeast(n float64) func(float64) bool { return func(v float64) bool { return v >= n } }
func equals(n float64) func(float64) bool  { return func(v float64) bool { return v == n } }
