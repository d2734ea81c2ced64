//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// blindSettlePeriods is how many status periods the pristine build is
// still watched after its node reflector was refused with the Node in
// place: by then a cache that had been filled would have reached the
// Cluster's status.
const blindSettlePeriods = 3

// testRotation is the rotation suite's rotation scenario (karmada PR
// #7663's manual test) on the real control plane: member1's token rotated
// the way an operator would (Member.Rotate: new token into the Secret, then
// the old one revoked, so the Secret never holds a rejected token), the
// member restarted so that every watch has to reconnect, then a Node
// created. The Cluster, read through karmada-aggregated-apiserver, must
// stay Ready (health checks build a fresh client from the Secret) and the
// Node must appear in status.nodeSummary (the cluster status controller's
// long-lived node informer). Pristine: the informer keeps its frozen,
// revoked token and never sees the Node (RED). Patched: it picks up the
// new token (GREEN).
func testRotation(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b)
	s := begin(t, "rotation", string(b), slices.Concat(standIns, []string{nodeStandIn})...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	m, ready, err := e.joinMember(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Timing("join-to-ready", ready)
	cm := e.cp.Process(karmadacp.ControllerManager)
	baseline, err := e.baseline(ctx)
	if err != nil {
		s.Fatalf("baseline: %v", err)
	}
	s.Notef("baseline: %s", baseline)

	var before karmada.MemberCredential
	if mt, err := karmada.ScrapeMetrics(ctx, e.cp.MetricsURL(karmadacp.ControllerManager)); err == nil {
		before = mt.MemberCredential(memberName)
	}
	rotateMark := len(cm.Log())
	rot, err := m.Rotate(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Mark(e2ereport.EventRotation)
	s.Notef("rotated: Secret %s/%s holds a token of ServiceAccount %s, then %s (the old token's) was deleted and recreated", karmadacp.ClusterNamespace, memberName, rot.To, rot.From)

	// From before the kill (see restartMemberAndCreateNode).
	restartMark := len(cm.Log())
	r, err := e.restartMemberAndCreateNode(ctx, "after")
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Timing("member-restart", r.restarted.Sub(r.killed))
	// What the controller-manager logs from here on, it logs with the Node
	// in place.
	nodeMark := len(cm.Log())

	if b == karmadacp.Patched {
		e.rotationPatched(ctx, s, cm, baseline, before, r, rotateMark, restartMark)
	} else {
		e.rotationPristine(ctx, s, cm, r.nodes, restartMark, nodeMark)
		// The pristine Cluster's status does not change, so only time shows
		// that health checks pass again: Ready holding until readyProof
		// does (see holdReady).
		readyProof := r.killed.Add(clusterFailureThreshold + 2*karmadacp.DefaultStatusUpdateFrequency)
		if err := e.holdReady(ctx, baseline, readyProof); err != nil {
			s.Errorf("short-lived path: %v", err)
		} else {
			s.Notef("short-lived path: the Cluster stayed Ready (condition unchanged since %s) through %s after the member went down",
				baseline.ReadySince, clusterFailureThreshold+2*karmadacp.DefaultStatusUpdateFrequency)
		}
	}
	if cm.Exited() {
		s.Errorf("%s exited (code %d); a member credential must never stop it", cm.Name(), cm.ExitCode())
	}
}

// rotationPatched waits for the Node to reach the Cluster's status and
// reports how long after the restart that took: from Restart's return
// (kube-apiserver ready again) and from the kill. Both include up to one
// status period and one poll interval of observation delay.
func (e *env) rotationPatched(ctx context.Context, s *e2ereport.Run, cm *controlplane.Process, baseline karmada.ClusterStatus, before karmada.MemberCredential, r memberRestart, rotateMark, restartMark int) {
	st, err := e.waitCollected(ctx, r.nodes, recoverTimeout)
	if err != nil {
		s.Outcome(e2ereport.Fail, "long-lived path did not recover: %v", err)
		return
	}
	s.Mark(e2ereport.EventRecovery)
	s.Timing("member-kill-to-recovered", time.Since(r.killed))
	s.Timing("restart-to-recovered", time.Since(r.restarted))
	// The cluster status controller collects nodes only in a sync whose
	// health check passed, so the new count shows the short-lived path
	// works after the restart; the unchanged transition time shows Ready
	// never flipped on the way.
	if st.ReadySince != baseline.ReadySince {
		s.Errorf("short-lived path: the Ready condition changed during the rotation: %s (baseline %s)", st, baseline)
	} else {
		s.Notef("short-lived path: the Cluster stayed Ready (condition unchanged since %s); the new node count was collected in a sync whose health check passed", baseline.ReadySince)
	}
	refused := karmada.Lines(cm.Log(), restartMark, karmada.NodeInformerUnauthorized)
	s.Notef("long-lived path recovered: %s; node reflector errors with 401 after the restart: %d", st, len(refused))
	if lines := karmada.Lines(cm.Log(), rotateMark, MemberTokenPickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}
	if mt, err := karmada.ScrapeMetrics(ctx, e.cp.MetricsURL(karmadacp.ControllerManager)); err == nil {
		s.Notef("membercred counters over the rotation and restart: %s", mt.MemberCredential(memberName).Sub(before))
		checkDashboard(s, cm.Name(), mt)
	}
	s.Outcome(e2ereport.Pass, "GREEN: the Node created after the restart reached status.nodeSummary")
}

// rotationPristine watches the pristine build through its blind window and
// says RED with the node reflector's 401 as evidence.
func (e *env) rotationPristine(ctx context.Context, s *e2ereport.Run, cm *controlplane.Process, want int64, restartMark, nodeMark int) {
	created := time.Now()
	obs, err := e.observeBlind(ctx, cm, want, nodeMark)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Timing("blind-window", time.Since(created))
	if !obs.refusedAt.IsZero() {
		s.MarkAt(e2ereport.EventFirstFailure, obs.refusedAt)
	}
	if obs.sawNode {
		s.Outcome(e2ereport.Pass, "the pristine build saw the Node created after the restart (%s): the scenario no longer reproduces the bug", obs.last)
		return
	}
	// A LIST refused is the plainest line (a failed watch's error may
	// carry the restart's connection reset in the same line).
	s.Notef("evidence: %s", firstLine(cm.Log(), nodeMark, karmada.NodeListUnauthorized, karmada.NodeInformerUnauthorized))
	s.Outcome(e2ereport.RedAsExpected, "RED: status.nodeSummary.totalNum stayed %d while the member had %d Nodes; %d status periods after the node reflector was refused (401) with the Node in place, it was still missing (node reflector 401s since the restart: %d)",
		obs.last.Nodes, want, blindSettlePeriods, len(karmada.Lines(cm.Log(), restartMark, karmada.NodeInformerUnauthorized)))
}

// blindObservation is what observeBlind saw.
type blindObservation struct {
	sawNode bool
	// refusal is the first node reflector 401 logged after the Node was
	// created (redacted).
	refusal string
	// refusedAt is when refusal was first seen.
	refusedAt time.Time
	last      karmada.ClusterStatus
}

// observeBlind watches a controller-manager that should not see the Node
// counted in nodes. The window is as short as a convincing negative
// allows: it ends blindSettlePeriods status periods after the node
// reflector was refused (401) at least once after the Node existed, which
// shows it tried again with its frozen token and failed; seeing the Node
// at any point ends it early. The reflector's retry may take up to
// reflectorRetryBound; without one by then the window is inconclusive and
// the scenario fails. (The Ready check that follows in testRotation
// extends the observation to clusterFailureThreshold after the restart in
// any case.)
func (e *env) observeBlind(ctx context.Context, cm *controlplane.Process, nodes int64, mark int) (blindObservation, error) {
	var obs blindObservation
	deadline := time.Now().Add(reflectorRetryBound)
	for {
		st, err := e.clusterStatus(ctx)
		if err != nil {
			return obs, fmt.Errorf("reading cluster %s: %w", memberName, err)
		}
		obs.last = st
		if st.HasNodeSummary && st.Nodes == nodes {
			obs.sawNode = true
			return obs, nil
		}
		if obs.refusal == "" {
			if lines := karmada.Lines(cm.Log(), mark, karmada.NodeInformerUnauthorized); len(lines) > 0 {
				obs.refusal, obs.refusedAt = lines[0], time.Now()
			}
		}
		switch {
		case obs.refusal != "" && time.Since(obs.refusedAt) >= blindSettlePeriods*karmadacp.DefaultStatusUpdateFrequency:
			return obs, nil
		case cm.Exited():
			return obs, fmt.Errorf("%s exited (code %d) during the observation", cm.Name(), cm.ExitCode())
		case time.Now().After(deadline):
			return obs, fmt.Errorf("inconclusive: the node reflector logged no 401 within %s after the Node was created, and the Node was not seen either (last: %s)", reflectorRetryBound, st)
		}
		select {
		case <-ctx.Done():
			return obs, ctx.Err()
		case <-time.After(clusterPoll):
		}
	}
}
