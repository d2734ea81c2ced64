//go:build e2e

package worker

import (
	"context"
	"fmt"
	"github.com/holdfast-dist/holdfast/internal/harness/hubcrds"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// caPristineWindow is how long the pristine worker is watched after hub-a
// came back with a new CA and its CA file was swapped: client-go's
// reflector retries a failed watch within [30s, 60s) and each retry dials a
// new connection; past this, every retry has met the new certificate.
const caPristineWindow = 90 * time.Second

// caRotationEnv is hub-a and hub-b of their own for one CA scenario: a
// cluster switches to its next CA only once (Cluster.RestartWithNextCA), so
// the shared hubs cannot serve it. It shares the worker cluster and the
// binary with the suite's environment; the worker's CA files for both hubs
// are kubelet Secret volumes.
func caRotationEnv(t *testing.T, sc *e2ereport.Run, shared *environment) (*environment, map[*hub]*caVolume) {
	t.Helper()
	ctx := t.Context()
	dir, err := os.MkdirTemp("", "holdfast-e2e-worker-ca-")
	if err != nil {
		sc.Fatalf("%v", err)
	}
	e := &environment{root: shared.root, dir: dir, binary: shared.binary, worker: shared.worker,
		workerKubeconfig: shared.workerKubeconfig, versions: map[string]string{}}
	t.Cleanup(func() {
		// The worker cluster is the suite's: stop only the hubs started here.
		e.worker = nil
		e.stop(t.Failed())
	})
	for _, d := range []string{"logs", "credentials"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			sc.Fatalf("%v", err)
		}
	}
	etcd, kas, err := controlplane.EnsureBinaries(ctx, e.root)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	crds, err := hubCRDs(ctx)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	e.hubA = &hub{name: "hub-a", slot: "primary"}
	e.hubB = &hub{name: "hub-b", slot: "secondary"}
	vols := map[*hub]*caVolume{}
	for _, h := range []*hub{e.hubA, e.hubB} {
		if err := e.startHub(ctx, h, etcd, kas, crds); err != nil {
			sc.Fatalf("%v", err)
		}
		v, err := newCAVolume(filepath.Join(dir, "credentials", h.name+"-ca"), h.cp.CAData())
		if err != nil {
			sc.Fatalf("%v", err)
		}
		h.access.CAFile = v.File()
		vols[h] = v
	}
	return e, vols
}

// rotateHubCA restarts h on the same port serving a certificate of a CA it
// never presented, then swaps the worker's CA file for h to that CA as the
// kubelet would once the Secret was updated. It returns when the file
// holds the new CA.
func rotateHubCA(ctx context.Context, sc *e2ereport.Run, h *hub, v *caVolume) time.Time {
	next := h.cp.NextCAData()
	killed := time.Now()
	if err := h.cp.RestartWithNextCA(ctx); err != nil {
		sc.Fatalf("hub %s: restarting with a new CA: %v", h.name, err)
	}
	sc.Mark(e2ereport.EventRotation)
	sc.Timing("hub-restart", time.Since(killed))
	if err := v.Publish(next); err != nil {
		sc.Fatalf("hub %s: %v", h.name, err)
	}
	return time.Now()
}

// okSince counts the worker's requests h answered with a 2xx at or after
// since: each is a TLS connection verified against h's current CA (a
// request on a connection the worker could not verify never reaches h).
func okSince(h *hub, since time.Time) (int, error) {
	events, err := h.workerRequests()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events {
		if !e.RequestReceived.Before(since) && e.ResponseStatus.Code >= 200 && e.ResponseStatus.Code < 300 {
			n++
		}
	}
	return n, nil
}

// testHubCARotation: connected to hub-a, the worker sees hub-a come back
// with a serving certificate of a new CA and its HUB_CA_FILE swapped to
// that CA through ..data. The patched worker reconnects without a restart
// (hub-a answers its requests again, its Cluster is reconciled again) and
// then follows a failover to hub-b whose claim it reads through hub-a's new
// CA. The pristine worker keeps the CA it read at start: hub-a answers
// none of its requests.
func testHubCARotation(t *testing.T, shared *environment, bin workerBinary) {
	name := "hub CA rotation: hub-a restarted with a new CA, CA file swapped (..data); reconnects without a restart, then follows failover"
	if bin.Pristine {
		name = "hub CA rotation (pristine upstream): hub-a restarted with a new CA, CA file swapped (..data)"
	}
	sc := beginScenario(t, suiteFailover, name, bin)
	sc.Notef("hub-a and hub-b of this scenario's own (a cluster switches CA once); the worker cluster is the suite's; each HUB_*CA_FILE is a kubelet Secret volume layout (ca.crt -> ..data/ca.crt)")
	ctx := context.Background()
	env, vols := caRotationEnv(t, sc, shared)
	sc.Check(env.resetHubs(ctx))
	_, err := env.publishOnBoth(ctx, env.hubA.claim())
	sc.Check(err)
	s := env.settings(t, &env.hubB.access)
	run := "ca-rotation"
	if bin.Pristine {
		run += "-pristine"
	}
	w := env.startWorker(t, run+"-1", bin, s)
	sc.Check(w.waitReconciled(ctx, env.hubA))
	sc.Timing("start-to-connected", time.Since(w.started))
	if !bin.Pristine {
		_, err = w.waitMetric(ctx, seriesActive("primary"), equals(1))
		sc.Check(err)
	}

	// Cleared, so that a reconciliation after the rotation shows a
	// working client, not the one from before.
	sc.Check(env.hubA.resetStatus(ctx))
	swapped := rotateHubCA(ctx, sc, env.hubA, vols[env.hubA])
	sc.Notef("hub-a restarted on %s with a serving certificate of a new CA; the worker's CA file for hub-a swapped to it", env.hubA.access.Endpoint)

	if bin.Pristine {
		select {
		case <-w.proc.Done():
			sc.Fatalf("the pristine worker exited (code %d) after hub-a's CA changed; see %s", w.proc.ExitCode(), w.proc.LogFile())
		case <-time.After(caPristineWindow):
		}
		n, err := okSince(env.hubA, swapped)
		sc.Check(err)
		if n != 0 {
			sc.Fatalf("hub-a answered %d requests of the pristine worker after its CA changed: upstream may re-read HUB_CA_FILE now", n)
		}
		if ok, err := env.hubA.reconciledByWorker(ctx); err != nil || ok {
			sc.Fatalf("hub-a's Cluster was reconciled after the CA change (%v): upstream may re-read HUB_CA_FILE now", err)
		}
		sc.Notef("RED as expected: %s after the swap the pristine worker still runs and hub-a has answered none of its requests (it verifies against the CA it read at start)", caPristineWindow)
		return
	}

	sc.Check(waitUntil(ctx, w, "hub-a answers the worker through its new CA", func(context.Context) (bool, error) {
		n, err := okSince(env.hubA, swapped)
		return n > 0, err
	}))
	sc.Mark(e2ereport.EventRecovery)
	sc.Timing("swap-to-first-answer", time.Since(swapped))
	sc.Check(w.waitReconciled(ctx, env.hubA))
	sc.Timing("swap-to-reconciled", time.Since(swapped))
	if w.proc.Exited() {
		sc.Fatalf("the worker exited after hub-a's CA changed (code %d): it should have reconnected in place", w.proc.ExitCode())
	}
	sc.Notef("reconnected without a restart: hub-a answered the worker through its new CA and the worker reconciled its Cluster there again")

	claimed, err := env.publishOnBoth(ctx, env.hubB.claim())
	sc.Check(err)
	exited, err := w.waitExit(resolveInterval*switchConfirmations + exitMargin)
	sc.Check(err)
	sc.Timing("claim-to-exit", exited.Sub(claimed))
	if code := w.proc.ExitCode(); code != 0 {
		sc.Fatalf("exit code after a confirmed switch = %d, want 0", code)
	}
	restarted := env.startWorker(t, run+"-2", bin, s)
	sc.Check(restarted.waitReconciled(ctx, env.hubB))
	sc.Timing("claim-to-connected-b", time.Since(claimed))
	checkNoToken(sc, w.proc.Log(), env.hubA.access.TokenFile, env.hubB.access.TokenFile, shared.ownTokenFile(workerSA))
	sc.Notef("followed: after the CA change the worker read both hubs' claims, exited 0 with %q and, restarted, reconciled its Cluster on hub-b", logSwitch)
}

// hubCRDs are the KubeSlice hub CRDs, as newEnvironment reads them.
func hubCRDs(ctx context.Context) ([]byte, error) {
	apisDir, err := hubcrds.ModuleDir(ctx, hubcrds.APIsModule, hubcrds.APIsVersion)
	if err != nil {
		return nil, err
	}
	crds, err := hubcrds.ReadCRDs(filepath.Join(apisDir, "crd"))
	if err != nil {
		return nil, fmt.Errorf("hub CRDs: %w", err)
	}
	return crds, nil
}
