//go:build e2e

package worker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// The guard's tuning here: three persisting 401s within 20s. The guard
// counts at most one 401 per second (membercred's strike spacing), and a
// worker whose watches all re-list after an API server restart retries with
// client-go's backoff (0.8s doubling), so three strikes come within a few
// seconds of the restart; production's 5 in 5m would make a long test.
// MinDuration short (default 1m) to keep the scenario short; its jitter adds up to half.
var testGuard = guardSettings{Threshold: 3, Window: 20 * time.Second, MinDuration: 4 * time.Second}

// guardStrikeSpacing is membercred's shortest time between two counted
// 401s (pkg/membercred guardStrikeSpacing): one burst of rejected requests
// is one strike.
const guardStrikeSpacing = time.Second

// Guard metrics (pkg/membercred) and its exit line.
const (
	seriesOwnUnauthorized = "holdfast_own_credential_unauthorized_total"
	seriesOwnRecovered    = "holdfast_own_credential_unauthorized_recovered_total"
	seriesOwnPersisting   = "holdfast_own_credential_persisting_unauthorized"
	seriesOwnTripped      = "holdfast_own_credential_guard_tripped_total"
	logGuardExit          = "Own API server credential is permanently rejected, exiting so the restarted process re-reads its credential"
	// logGuardSetup is the glue's line when a guard variable is not understood.
	logGuardSetup = "Could not set up the own-credential guard"
)

// TestOwnCredentialGuard is the worker-own-credential suite. Each scenario
// gives the worker its own ServiceAccount on the worker cluster, read from a
// token file through its kubeconfig, as a pod reads its projected token.
func TestOwnCredentialGuard(t *testing.T) {
	env := environmentFor(t, suiteOwnCredential)
	t.Run("revoked", func(t *testing.T) { testOwnCredentialRevoked(t, env) })
	t.Run("rotated", func(t *testing.T) { testOwnCredentialRotated(t, env) })
	t.Run("unknown-action", func(t *testing.T) { testUnknownGuardAction(t, env) })
}

// startGuarded starts a primary-only worker whose own credential is sa's
// token on the worker cluster, and waits until it works (it has reconciled
// its Cluster on hub-a, reading the worker cluster's Node to do so).
func (e *environment) startGuarded(t *testing.T, sc *e2ereport.Run, sa string) *runningWorker {
	ctx := context.Background()
	kubeconfig, err := e.ownCredential(ctx, sa)
	sc.Check(err)
	sc.Check(e.resetHubs(ctx))
	s := e.settings(t, nil)
	s.Kubeconfig = kubeconfig
	s.Guard = testGuard
	w := e.startWorker(t, "guard-"+sa, e.binary, s)
	sc.Check(w.waitReconciled(ctx, e.hubA))
	_, err = w.waitMetric(ctx, seriesOwnPersisting, equals(0)) // the guard is installed
	sc.Check(err)
	return w
}

// restartWorkerCluster restarts the worker cluster's API server. A revoked
// token keeps the watches it opened before: they were authenticated once.
// The worker's informers re-list, with whatever token they hold, after an
// API server restart or rollout, or when a watch times out (5-10 minutes);
// the restart is that moment, brought forward.
func (e *environment) restartWorkerCluster(sc *e2ereport.Run) time.Time {
	sc.Check(e.worker.Restart(context.Background()))
	return time.Now()
}

// testOwnCredentialRevoked: the worker's ServiceAccount is deleted and
// recreated, so its token is permanently invalid and the file holds nothing
// better. The worker exits 1 with the guard's line instead of running on,
// Ready and blind.
func testOwnCredentialRevoked(t *testing.T, env *environment) {
	sc := beginScenario(t, suiteOwnCredential, "a revoked own credential: the worker exits with the guard's line", env.binary)
	const sa = "kubeslice-worker-revoked"
	w := env.startGuarded(t, sc, sa)
	token, err := os.ReadFile(env.ownTokenFile(sa))
	sc.Check(err)

	began := time.Now()
	sc.Check(env.worker.RevokeServiceAccount(context.Background(), podNamespace, sa, strings.TrimSpace(string(token))))
	revoked := time.Now()
	sc.Timing("revocation", revoked.Sub(began))
	restarted := env.restartWorkerCluster(sc)
	sc.Timing("apiserver-restart", restarted.Sub(revoked))
	// Tripping takes Threshold strikes within Window, the first at the
	// latest at the re-list right after the restart: the guard trips within
	// Window of the restart or not at all. The margin covers scheduling on a
	// loaded machine.
	exited, err := w.waitExit(testGuard.Window + 10*time.Second)
	sc.Check(err)
	sc.Timing("revoked-to-exit", exited.Sub(revoked))
	if exited.After(restarted) { // the worker's own requests may trip it before the restart
		sc.Timing("restart-to-exit", exited.Sub(restarted))
	}
	if code := w.proc.ExitCode(); code != 1 {
		sc.Fatalf("exit code = %d, want 1 (the guard's exit)", code)
	}
	log := w.proc.Log()
	if !strings.Contains(log, logGuardExit) {
		sc.Fatalf("the worker exited without the guard's line %q", logGuardExit)
	}
	checkNoToken(sc, log, env.ownTokenFile(sa), env.hubA.access.TokenFile)
	sc.Notef("threshold %d, window %s: exit 1 with %q", testGuard.Threshold, testGuard.Window, logGuardExit)
}

// testOwnCredentialRotated: the ServiceAccount is deleted and recreated and
// a fresh token for it lands in the file at once, as the kubelet writes a
// refreshed projected token. The worker's clients still hold the old token
// (client-go re-reads the file once a minute), so the next requests get 401;
// the guard replays them with the file's token, and the worker keeps working.
func testOwnCredentialRotated(t *testing.T, env *environment) {
	sc := beginScenario(t, suiteOwnCredential, "one transient 401 (token rotated under the worker) does not make it exit", env.binary)
	const sa = "kubeslice-worker-rotated"
	ctx := context.Background()
	w := env.startGuarded(t, sc, sa)
	oldToken, err := os.ReadFile(env.ownTokenFile(sa))
	sc.Check(err)

	began := time.Now()
	sc.Check(env.worker.RevokeServiceAccount(ctx, podNamespace, sa, strings.TrimSpace(string(oldToken))))
	sc.Check(env.mintOwnToken(ctx, sa, env.ownTokenFile(sa)))
	sc.Timing("revocation-and-new-token", time.Since(began))
	restarted := env.restartWorkerCluster(sc)
	// Evidence that the 401 happened: the guard replayed a rejected request
	// with the file's fresh token and hid it from the worker.
	_, err = w.waitMetric(ctx, seriesOwnRecovered, atLeast(1))
	sc.Check(err)
	sc.Timing("restart-to-replayed", time.Since(restarted))

	// The window ends on work, not on a clock: clear the worker's
	// status.nodeIPs on hub-a, and wait until the worker writes it again,
	// which it does only after listing the worker cluster's Nodes with its
	// own credential, after the rotation.
	sc.Check(env.hubA.resetStatus(ctx))
	sc.Check(w.waitReconciled(ctx, env.hubA))
	sc.Timing("restart-to-working", time.Since(restarted))
	// And on the guard's clock: a guard that counted these 401s would trip
	// (threshold-1) strike spacings after the first at the earliest (the
	// revoked scenario's worker exits within two seconds of the same
	// restart); the worker is watched three times that long.
	window := 3 * time.Duration(testGuard.Threshold-1) * guardStrikeSpacing
	select {
	case <-w.proc.Done():
		sc.Fatalf("%v", w.errExited())
	case <-time.After(time.Until(restarted.Add(window))):
	}
	m, err := w.metrics(ctx)
	sc.Check(err)
	for series, want := range map[string]float64{seriesOwnPersisting: 0, seriesOwnTripped: 0} {
		if v, found := m.value(series); !found || v != want {
			sc.Fatalf("%s = %v (exposed: %v), want %v", series, v, found, want)
		}
	}
	log := w.proc.Log()
	if strings.Contains(log, logGuardExit) {
		sc.Fatalf("the guard logged %q", logGuardExit)
	}
	if strings.Contains(log, strings.TrimSpace(string(oldToken))) {
		sc.Fatalf("the worker's log contains its rotated-out token")
	}
	checkNoToken(sc, log, env.ownTokenFile(sa), env.hubA.access.TokenFile)
	seen, _ := m.value(seriesOwnUnauthorized)
	replayed, _ := m.value(seriesOwnRecovered)
	sc.Notef("after the rotation the worker got %v 401s, %v of them hidden by one replay with the file's fresh token; "+
		"the guard did not trip (%s 0, %s 0) and the worker kept running and reconciling, watched for %s after the restart",
		seen, replayed, seriesOwnPersisting, seriesOwnTripped, window)
}

// testUnknownGuardAction: OWN_CREDENTIAL_GUARD_ACTION=OFF (a capitalised
// "off") is not a value the worker knows. Rather than run with the guard in
// a state nobody asked for, it stops at startup: exit 1, one line naming the
// variable, the value and the accepted values, and not one request to either
// hub (the guard is set up before the hub is resolved).
func testUnknownGuardAction(t *testing.T, env *environment) {
	sc := beginScenario(t, suiteOwnCredential, "an unknown OWN_CREDENTIAL_GUARD_ACTION stops the worker at startup with one line", env.binary)
	marks := map[*hub]int{}
	for _, h := range []*hub{env.hubA, env.hubB} {
		seen, err := h.workerRequests()
		sc.Check(err)
		marks[h] = len(seen)
	}
	s := env.settings(t, &env.hubB.access)
	s.Guard = guardSettings{Action: "OFF"}
	w := env.startWorker(t, "guard-unknown-action", env.binary, s)
	// A setup failure takes milliseconds; the limit only allows for a
	// loaded machine starting the process.
	exited, err := w.waitExit(30 * time.Second)
	sc.Check(err)
	sc.Timing("start-to-exit", exited.Sub(w.started))
	if code := w.proc.ExitCode(); code != 1 {
		sc.Fatalf("exit code = %d, want 1 (a setup failure)", code)
	}
	var lines []string
	for _, l := range strings.Split(w.proc.Log(), "\n") {
		if strings.Contains(l, envGuardAction) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		sc.Fatalf("want exactly one log line naming %s, got %d:\n%s", envGuardAction, len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{logGuardSetup, `OWN_CREDENTIAL_GUARD_ACTION=\"OFF\"`, "want exit, unhealthy or off"} {
		if !strings.Contains(lines[0], want) {
			sc.Fatalf("the worker's line %s lacks %q", lines[0], want)
		}
	}
	for _, h := range []*hub{env.hubA, env.hubB} {
		seen, err := h.workerRequests()
		sc.Check(err)
		if n := len(seen) - marks[h]; n != 0 {
			sc.Fatalf("%s's audit log has %d requests from the worker; a setup failure must come before any hub is contacted", h.name, n)
		}
	}
	sc.Notef("exit 1 after %s with: %s; no request to either hub", exited.Sub(w.started).Round(time.Millisecond), lines[0])
}
