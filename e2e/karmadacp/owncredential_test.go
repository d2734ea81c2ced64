//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

const (
	// guardThreshold and guardMinDuration are the patched
	// controller-manager's --own-credential-guard-threshold (default 5)
	// and --own-credential-guard-min-duration (default 1m) here, as in the
	// rotation suite: after karmada-apiserver's restart every informer of
	// the default controller set relists with the revoked token at once,
	// so 3 persisting 401s come within seconds either way; 5 s keeps the
	// scenario short and still shows the minimum is honoured.
	guardThreshold   = 3
	guardMinDuration = 5 * time.Second
	// guardExitCode is the guard's exit status (docs/karmada.md).
	guardExitCode = 1
	// ownExitTimeout bounds the patched exit after the kill: the first
	// relist (client-go's first backoff steps), the minimum, its jitter
	// (up to half of it); the rest is margin for a busy runner.
	ownExitTimeout = 2 * time.Minute
	// pristineOwnRefusals is how many 401s on its own credential the
	// pristine controller-manager must log, and survive, before its window
	// ends: twice what makes the patched one exit.
	pristineOwnRefusals = 2 * guardThreshold
	// pristineOwnWindow is the least the pristine build is watched after
	// the kill: twice the latest the patched guard may trip (the minimum
	// plus its largest jitter, half of it).
	pristineOwnWindow = 2 * (guardMinDuration + guardMinDuration/2)
)

// testOwnCredential is the rotation suite's own-credential scenario on the
// real control plane: the controller-manager's OWN ServiceAccount on
// karmada-apiserver is revoked (deleted and recreated) and karmada-apiserver
// SIGKILLed and restarted, so every watch of the default controller set
// reconnects with the revoked token while the other components (admin
// credentials) carry on. The patched build's guard exits with code 1 and
// one line, so that the kubelet would restart it with a fresh token; the
// pristine build keeps running, refused on every request, Ready to its
// probes.
func testOwnCredential(t *testing.T, b karmadacp.Build) {
	var opts []envOption
	if b == karmadacp.Patched {
		opts = append(opts, withControllerManagerFlags(
			fmt.Sprintf("--own-credential-guard-threshold=%d", guardThreshold),
			fmt.Sprintf("--own-credential-guard-min-duration=%s", guardMinDuration)))
	}
	e := newEnv(t, b, opts...)
	s := begin(t, "own-credential", string(b), standIns...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	cm := e.cp.Process(karmadacp.ControllerManager)
	if err := wait.PollUntilContextTimeout(ctx, poll, readyTimeout, true, func(context.Context) (bool, error) {
		return strings.Contains(cm.Log(), controllersStarted), nil
	}); err != nil {
		s.Fatalf("%s did not log %q within %s: %v", cm.Name(), controllersStarted, readyTimeout, err)
	}
	account := string(karmadacp.ControllerManager)
	if err := e.cp.API.RevokeServiceAccount(ctx, karmadacp.SystemNamespace, account); err != nil {
		s.Fatalf("revoking the controller-manager's own ServiceAccount %s/%s: %v", karmadacp.SystemNamespace, account, err)
	}
	s.Notef("own ServiceAccount %s/%s on karmada-apiserver deleted and recreated, karmada-apiserver SIGKILLed and restarted so that watches reconnect", karmadacp.SystemNamespace, account)
	if b == karmadacp.Patched {
		s.Notef("patched runs with --own-credential-guard-threshold=%d --own-credential-guard-min-duration=%s", guardThreshold, guardMinDuration)
	}
	mark := len(cm.Log())
	killed := time.Now()
	if err := e.cp.API.Restart(ctx); err != nil {
		s.Fatalf("restarting karmada-apiserver: %v", err)
	}
	s.Timing("karmada-apiserver-restart", time.Since(killed))
	// Timed from the kill: kube-apiserver authenticates (and refuses)
	// requests before its /readyz passes, so the guard may act while
	// Restart still waits for readiness.
	if b == karmadacp.Patched {
		ownCredentialPatched(ctx, s, cm, killed)
	} else {
		ownCredentialPristine(ctx, s, cm, mark, killed)
	}
	// The rest of the control plane is untouched by the controller-manager's
	// credential: the aggregated API server still serves Clusters.
	if _, err := e.cp.API.Dynamic().Resource(karmadacp.ClusterGVR).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		s.Errorf("the Cluster API through karmada-apiserver after its restart: %v", err)
	}
}

// controllersStarted is what controller-runtime logs once a controller's
// caches synced and it runs: the revocation then hits a working process.
const controllersStarted = "Starting workers"

func ownCredentialPatched(ctx context.Context, s *e2ereport.Run, cm *controlplane.Process, killed time.Time) {
	select {
	case <-cm.Done():
	case <-time.After(ownExitTimeout):
		s.Outcome(e2ereport.Fail, "still running %s after karmada-apiserver came back with its own token revoked", ownExitTimeout)
		return
	case <-ctx.Done():
		s.Fatalf("%v", ctx.Err())
	}
	toExit := time.Since(killed)
	s.Timing("kill-to-exit", toExit)
	lines := karmada.Lines(cm.Log(), 0, karmada.OwnCredentialExit)
	switch code := cm.ExitCode(); {
	case code != guardExitCode || len(lines) == 0:
		s.Outcome(e2ereport.Fail, "exited with code %d and %d guard lines, want code %d and the guard's line", code, len(lines), guardExitCode)
	case toExit < guardMinDuration:
		// The first 401 comes after the kill, so an exit sooner than the
		// minimum after it tripped on count alone.
		s.Outcome(e2ereport.Fail, "exited %s after the kill, before --own-credential-guard-min-duration=%s", toExit, guardMinDuration)
	default:
		s.Notef("evidence: %s", lines[0])
		s.Outcome(e2ereport.Pass, "GREEN: exited with code %d through the own-credential guard; the other components kept serving", guardExitCode)
	}
}

func ownCredentialPristine(ctx context.Context, s *e2ereport.Run, cm *controlplane.Process, mark int, killed time.Time) {
	var refusals []string
	err := wait.PollUntilContextTimeout(ctx, poll, ownExitTimeout, true, func(context.Context) (bool, error) {
		refusals = karmada.Lines(cm.Log(), mark, Unauthorized)
		return cm.Exited() || (len(refusals) >= pristineOwnRefusals && time.Since(killed) >= pristineOwnWindow), nil
	})
	if cm.Exited() {
		s.Outcome(e2ereport.Pass, "the pristine controller-manager exited (code %d) after its own token was revoked: the scenario no longer reproduces the bug", cm.ExitCode())
		return
	}
	if err != nil {
		s.Fatalf("inconclusive: %d of %d 401s logged within %s after the kill", len(refusals), pristineOwnRefusals, ownExitTimeout)
	}
	s.Timing("window", time.Since(killed))
	if lines := karmada.Lines(cm.Log(), mark, karmada.ListUnauthorized); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	} else {
		s.Notef("evidence: %s", refusals[0])
	}
	s.Outcome(e2ereport.RedAsExpected, "RED: still running %s after karmada-apiserver was killed and restarted, having logged %d 401s on its own credential",
		time.Since(killed).Round(100*time.Millisecond), len(karmada.Lines(cm.Log(), mark, Unauthorized)))
}
