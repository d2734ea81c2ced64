//go:build e2e

package karmada

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

const (
	// guardThreshold is the patched binary's
	// --own-credential-guard-threshold here (default 5). After the host's
	// restart every informer of the controller-manager relists with the
	// revoked token at once, so 3 persisting 401s arrive within seconds
	// either way; 3 keeps the wait short and is still above 1, the value at
	// which a single 401 would trip it.
	guardThreshold = 3
	// guardMinDuration is the patched binary's
	// --own-credential-guard-min-duration here (default 1m): the guard trips
	// only once the rejection has lasted this long plus its jitter (up to
	// half of it). Short, to keep the scenario short; long enough that an
	// exit before it would show the minimum is not honoured.
	guardMinDuration = 5 * time.Second
	// guardExitCode is the guard's exit status (docs/karmada.md).
	guardExitCode = 1
	// exitTimeout bounds the patched binary's exit after the host is killed:
	// the informers' first relist, within client-go's first backoff steps;
	// the rest is margin for a busy runner.
	exitTimeout = 2 * time.Minute
	// pristineRefusals is how many 401s the pristine binary must log, and
	// survive, before its window ends: twice what makes the patched one exit.
	pristineRefusals = 2 * guardThreshold
)

// testOwnCredential revokes the controller-manager's OWN ServiceAccount on
// the Karmada host and restarts the host, so that its watches reconnect
// with the revoked token. The patched binary's guard exits (code 1, one log
// line) so that the kubelet would restart it with a fresh token; the
// pristine binary keeps running, refused on every request. Both run at
// once: no member is joined, so they have nothing to compete for.
func testOwnCredential(t *testing.T, e *env) {
	ctx := t.Context()
	// Recorded last-in first-out: pristine first, as in the other rows.
	patchedScenario := e.begin(t, "own-credential", Patched, e2ereport.Pass)
	pristineScenario := e.begin(t, "own-credential", Pristine, e2ereport.RedAsExpected)

	pristine := e.startControllerManager(t, Pristine, "own-credential-pristine")
	patched := e.startControllerManager(t, Patched, "own-credential-patched",
		fmt.Sprintf("--own-credential-guard-threshold=%d", guardThreshold),
		fmt.Sprintf("--own-credential-guard-min-duration=%s", guardMinDuration))
	for _, cm := range []*controllerManager{pristine, patched} {
		if err := cm.WaitForLog(ctx, controllersStarted); err != nil {
			t.Fatal(err)
		}
	}
	for _, cm := range []*controllerManager{pristine, patched} {
		if err := e.host.RevokeServiceAccount(ctx, ownNamespace, cm.account); err != nil {
			t.Fatalf("revoking %s's own ServiceAccount %s/%s: %v", cm.Name(), ownNamespace, cm.account, err)
		}
	}
	note := fmt.Sprintf("own ServiceAccount %s/<name> on the host deleted and recreated, host restarted so that watches reconnect; patched runs with --own-credential-guard-threshold=%d --own-credential-guard-min-duration=%s", ownNamespace, guardThreshold, guardMinDuration)
	pristineScenario.Notef("%s", note)
	patchedScenario.Notef("%s", note)
	mark := len(pristine.Log())
	killed := time.Now()
	if err := e.host.Restart(ctx); err != nil {
		t.Fatalf("restarting the Karmada host: %v", err)
	}
	restart := time.Since(killed)
	patchedScenario.Timing("host-restart", restart)
	pristineScenario.Timing("host-restart", restart)

	// Timed from the kill: kube-apiserver authenticates (and refuses)
	// requests before its /readyz passes, so the guard may act while
	// Restart still waits for readiness.
	toExit := ownCredentialPatched(ctx, patchedScenario, patched, killed)
	ownCredentialPristine(ctx, pristineScenario, pristine, mark, killed, 2*toExit)
}

// controllersStarted is what controller-runtime logs once a controller's
// caches synced and it runs: the revocation then hits a working process.
const controllersStarted = "Starting workers"

// ownCredentialPatched waits for the patched binary's guard to end it and
// returns how long that took after the host was killed.
func ownCredentialPatched(ctx context.Context, s *e2ereport.Run, cm *controllerManager, killed time.Time) time.Duration {
	select {
	case <-cm.Done():
	case <-time.After(exitTimeout):
		s.Outcome(e2ereport.Fail, "still running %s after the host came back with its own token revoked", exitTimeout)
		return exitTimeout
	case <-ctx.Done():
		s.Fatalf("%v", ctx.Err())
	}
	toExit := time.Since(killed)
	s.Timing("host-kill-to-exit", toExit)
	lines := Lines(cm.Log(), 0, OwnCredentialExit)
	if code := cm.ExitCode(); code != guardExitCode || len(lines) == 0 {
		s.Outcome(e2ereport.Fail, "exited with code %d and %d guard lines, want code %d and the guard's line", code, len(lines), guardExitCode)
		return toExit
	}
	// The first 401 comes after the kill, so an exit sooner than the
	// minimum after the kill tripped on count alone.
	if toExit < guardMinDuration {
		s.Outcome(e2ereport.Fail, "exited %s after the host was killed, before --own-credential-guard-min-duration=%s", toExit, guardMinDuration)
		return toExit
	}
	s.Notef("evidence: %s", lines[0])
	s.Outcome(e2ereport.Pass, "GREEN: exited with code %d through the own-credential guard", guardExitCode)
	return toExit
}

// ownCredentialPristine watches the pristine binary after the host was
// killed. The window ends once it has logged pristineRefusals 401s and has
// run at least minWindow (twice as long as the patched binary took to
// exit) since the kill: twice the evidence on which the patched binary
// acted, for twice as long.
func ownCredentialPristine(ctx context.Context, s *e2ereport.Run, cm *controllerManager, mark int, killed time.Time, minWindow time.Duration) {
	var refusals []string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, exitTimeout, true, func(context.Context) (bool, error) {
		refusals = Lines(cm.Log(), mark, Unauthorized)
		return cm.Exited() || (len(refusals) >= pristineRefusals && time.Since(killed) >= minWindow), nil
	})
	if cm.Exited() {
		s.Outcome(e2ereport.Pass, "the pristine binary exited (code %d) after its own token was revoked: the suite no longer reproduces the bug", cm.ExitCode())
		return
	}
	if err != nil {
		s.Fatalf("inconclusive: %d of %d 401s logged within %s after the host was killed", len(refusals), pristineRefusals, exitTimeout)
	}
	s.Timing("window", time.Since(killed))
	s.Notef("evidence: %s", plainest(Lines(cm.Log(), mark, ListUnauthorized), refusals)[0])
	s.Outcome(e2ereport.RedAsExpected, "RED: still running %s after the host was killed and restarted, having logged %d 401s on its own credential",
		time.Since(killed).Round(100*time.Millisecond), len(Lines(cm.Log(), mark, Unauthorized)))
}
