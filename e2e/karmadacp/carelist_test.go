//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// listWindow is how long each window of ca-rotation-lists lasts after its
// stimulus: longer than a reflector takes to watch again after its
// connection closed (at once) or after a member restart (client-go's watch
// backoff, 0.8 s doubling, while the member is down for about two
// seconds), and the same for every window, so that their counts compare.
// The counts, not the time, are judged.
const listWindow = 8 * time.Second

// testCARelist is issue 26's item 4 on the real control plane: a CA change
// does not make karmada-controller-manager's member informers relist. It
// counts, in member1's audit log, the controller-manager's LISTs and
// WATCHes per resource in three windows of listWindow:
//
//   - quiet: nothing changes (old and new CA already published);
//   - restart: member1's kube-apiserver restarted with a certificate of the
//     new CA, which the Secret already holds (case A). What a restart
//     itself causes: every watch breaks (unexpected EOF) and is sent again
//     from its resourceVersion; the restarted watch cache starts at the
//     current etcd revision, so it closes a watch from an older one as too
//     old (a 410 event in a stream answered 200) and that informer LISTs
//     once (measured: one LIST and one WATCH per informer, each LIST after
//     such a closure, WatchTooOld, hence --v=4). It does that to any
//     client, whatever its CA: reported, not judged;
//   - change: the Secret's caBundle replaced by the new CA alone, which
//     drops the old CA: the patched build closes member1's connections
//     (connrotation), every informer's watch breaks on a server that did
//     not restart, and is re-sent from its resourceVersion.
//
// The change window must show no more LISTs of any resource than the quiet
// one, and WATCHes (the informers are connected again), and a Node created
// after it must reach status.nodeSummary. Pristine does not follow the
// Secret: its informers fail with x509 errors since the restart, and its
// only way back is a restart of the process (the workaround of Karmada
// issue #4802), done in its change window; every informer starts with a
// LIST, which the same assertion rejects (RED).
func testCARelist(t *testing.T, b karmadacp.Build) {
	pristine := b == karmadacp.Pristine
	e := newEnv(t, b, withMemberAudit(), withControllerManagerFlags("--v=4"))
	s := begin(t, "ca-rotation-lists", string(b), slices.Concat(standIns, []string{nodeStandIn,
		"member1's kube-apiserver writes an audit log (Metadata level, no bodies); the scenario counts karmada-controller-manager's LISTs (a WATCH with sendInitialEvents=true counts as one) and WATCHes per resource",
		"karmada-controller-manager runs with --v=4, so that a reflector logs why a watch closed",
		fmt.Sprintf("three windows of %s each: quiet (old+new CA published, nothing changes), restart (member1 restarted with the new CA), change (caBundle replaced by the new CA alone; pristine: karmada-controller-manager restarted instead, its workaround)", listWindow),
	})...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	m := e.joinMember1(ctx, s)
	if _, err := e.baseline(ctx); err != nil {
		s.Fatalf("baseline: %v", err)
	}
	cm := e.cp.Process(karmadacp.ControllerManager)
	oldCA, newCA := e.member.CAData(), e.member.NextCAData()
	if err := m.WriteCABundle(ctx, slices.Concat(oldCA, newCA)); err != nil {
		s.Fatalf("%v", err)
	}

	quiet, err := e.listWindow(ctx, nil)
	if err != nil {
		s.Fatalf("quiet window: %v", err)
	}
	s.Notef("quiet window: %s", FormatReads(quiet))

	restartMark := len(cm.Log())
	restart, err := e.listWindow(ctx, func() error {
		killed := time.Now()
		if err := e.member.RestartWithNextCA(ctx); err != nil {
			return fmt.Errorf("restarting %s with a new CA: %w", memberName, err)
		}
		s.Timing("member-restart", time.Since(killed))
		return nil
	})
	if err != nil {
		s.Fatalf("restart window: %v", err)
	}
	s.Notef("restart window (what the kube-apiserver restart itself causes): %s", FormatReads(restart))
	x509Restart := len(karmada.Lines(cm.Log(), restartMark, NodeInformerUnknownAuthority))
	tooOld := karmada.Lines(cm.Log(), restartMark, WatchTooOld)
	if len(tooOld) > 0 {
		s.Notef("restart window: %d watches closed as too old by the restarted watch cache, e.g. %s", len(tooOld), tooOld[0])
	}

	changeMark := len(cm.Log())

	change, err := e.listWindow(ctx, func() error {
		if err := m.WriteCABundle(ctx, newCA); err != nil {
			return err
		}
		if !pristine {
			return nil
		}
		restarted := time.Now()
		if err := e.cp.RestartControllerManager(ctx); err != nil {
			return err
		}
		s.Timing("controller-manager-restart", time.Since(restarted))
		return nil
	})
	if err != nil {
		s.Fatalf("change window: %v", err)
	}
	s.Notef("change window (%s): %s", map[bool]string{false: "caBundle replaced by the new CA alone, which drops the old CA and closes member1's connections", true: "caBundle replaced by the new CA alone, then karmada-controller-manager restarted"}[pristine], FormatReads(change))
	if pristine {
		s.Notef("pristine: node reflector x509 errors in the restart window: %d (the Cluster stays Ready; its informers do not follow the Secret)", x509Restart)
	} else if lines := karmada.Lines(cm.Log(), changeMark, MemberCABundlePickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}

	nodes, err := e.createNode(ctx, "after-change")
	if err != nil {
		s.Fatalf("%v", err)
	}
	st, err := e.waitCollected(ctx, nodes, recoverTimeout)
	if err != nil {
		s.Outcome(e2ereport.Fail, "the node informer did not see a Node created after the change window: %v", err)
		return
	}

	relisted := strings.Join(RelistedBeyond(change, quiet), "; ")
	switch {
	case len(relisted) > 0 && pristine:
		s.Outcome(e2ereport.RedAsExpected, "RED: pristine recovers only by a restart, which relists every member informer: %d LISTs in the change window (%s) against %d in the quiet window; Node collected afterwards (%s)", Lists(change), relisted, Lists(quiet), st)
	case len(relisted) > 0:
		s.Outcome(e2ereport.Fail, "the CA change made the informers relist: %s (change window %s; quiet window %s)", relisted, FormatReads(change), FormatReads(quiet))
	case watches(change) == 0:
		s.Outcome(e2ereport.Fail, "no WATCH in the change window: the connections were not closed, the assertion proves nothing (change window %s)", FormatReads(change))
	case pristine:
		s.Outcome(e2ereport.Pass, "the pristine build's restart did not relist: the scenario no longer shows the cost of the workaround")
	default:
		s.Outcome(e2ereport.Pass, "GREEN: closing member1's connections on the CA change made %d informers watch again from their resourceVersion and none relist (LISTs: change window %d, quiet window %d; restart window %d, what the restart itself causes, with %d watches closed as too old); node reflector x509 errors since the restart: %d; Node collected afterwards (%s)",
			watches(change), Lists(change), Lists(quiet), Lists(restart), len(tooOld), x509Restart, st)
	}
}

// listWindow runs stimulus (if any), waits listWindow and returns the
// controller-manager's reads of member1 from just before the stimulus.
func (e *env) listWindow(ctx context.Context, stimulus func() error) (map[string]Reads, error) {
	from := time.Now()
	if stimulus != nil {
		if err := stimulus(); err != nil {
			return nil, err
		}
	}
	select {
	case <-time.After(listWindow):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	events, err := controlplane.ReadAudit(e.memberAudit)
	if err != nil {
		return nil, err
	}
	return ComponentReads(events, string(karmadacp.ControllerManager), from, time.Now()), nil
}

func watches(reads map[string]Reads) int {
	n := 0
	for _, r := range reads {
		n += r.Watches
	}
	return n
}
