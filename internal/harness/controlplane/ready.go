package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/logtail"
)

// readyPoll is how often readiness is probed: well below the seconds a start
// takes, so a start is measured to a tenth of a second, and cheap for the
// server.
const readyPoll = 100 * time.Millisecond

// probeTimeout bounds one probe request, so a server that accepts and
// hangs costs a probe, not the whole wait.
const probeTimeout = 5 * time.Second

// startFailureLines is how much of a component's log a startup error quotes.
const startFailureLines = 15

// ErrAddrInUse marks a startup that failed because a chosen port was taken
// between FreePort and the bind; the caller starts it again on new ports.
var ErrAddrInUse = errors.New("address already in use")

// Probe checks readiness once; detail says what is still missing.
type Probe func(ctx context.Context) (ready bool, detail string)

// WaitReady polls until check reports ready. It fails early, quoting the
// process's log, when the process exits (wrapping ErrAddrInUse when it
// could not bind); and when ctx ends, with the last probe detail and the
// log. cluster names what the process belongs to in errors.
func WaitReady(ctx context.Context, cluster string, p *Process, check Probe) error {
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	var detail string
	for {
		var ready bool
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		ready, detail = check(pctx)
		cancel()
		if ready {
			return nil
		}
		select {
		case <-p.Done():
			err := fmt.Errorf("cluster %s: %s exited during startup (%v); see %s, last lines:\n%s",
				cluster, p.Name(), p.Wait(), p.LogFile(), logtail.Last(p.LogFile(), startFailureLines))
			if strings.Contains(p.Log(), "address already in use") {
				return fmt.Errorf("%w: %w", ErrAddrInUse, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("cluster %s: %s not ready: %w; last check: %s; see %s, last lines:\n%s",
				cluster, p.Name(), context.Cause(ctx), detail, p.LogFile(), logtail.Last(p.LogFile(), startFailureLines))
		case <-t.C:
		}
	}
}

// HTTPProbe GETs url and hands a 200 response's body to ok (nil: any 200
// is ready).
func HTTPProbe(client *http.Client, url string, ok func(body string) bool) Probe {
	return func(ctx context.Context) (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode == http.StatusOK && (ok == nil || ok(string(body))) {
			return true, ""
		}
		return false, fmt.Sprintf("GET %s: %s %s", url, resp.Status, failedChecks(string(body)))
	}
}

// failedChecks keeps the "[-]check failed" lines of a /readyz?verbose or
// failing /readyz body: those name what the server still waits for.
func failedChecks(body string) string {
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(line))
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}
