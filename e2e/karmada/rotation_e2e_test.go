//go:build e2e

package karmada

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

const (
	// blindSettlePeriods is how many status periods the pristine binary is
	// still watched after its node reflector was refused: by then a cache
	// that had been filled would have reached the Cluster's status.
	blindSettlePeriods = 3
	// reflectorRetryBound bounds waiting for a member reflector's next
	// attempt. client-go's reflector waits at most [30s, 60s) between
	// attempts; the rest is margin for a busy runner. For the pristine
	// binary, a reflector that has not tried again by then leaves the window
	// inconclusive, which fails the scenario rather than passing it as RED.
	reflectorRetryBound = 90 * time.Second
)

// testRotation is karmada PR #7663's manual test: rotate the member's token
// the way an operator would (new token into the Secret, then the old one
// revoked, so the Secret never holds a rejected token), restart the member
// so that every watch has to reconnect, then create a Node. The Cluster must
// stay Ready (health checks build a fresh client from the Secret) and the
// Node must appear in status.nodeSummary (the long-lived node informer).
// Pristine: the informer keeps its frozen, revoked token and never sees the
// Node (RED). Patched: it picks up the new token on the first 401 (GREEN).
func testRotation(t *testing.T, e *env, b Build) {
	expected := e2ereport.Pass
	if b == Pristine {
		expected = e2ereport.RedAsExpected
	}
	s := e.begin(t, "rotation", b, expected)
	ctx := t.Context()
	name := "rotation-" + string(b)

	j := e.join(t, name)
	cm := e.startControllerManager(t, b, name)
	baseline, err := e.baseline(ctx, name)
	if err != nil {
		s.Fatalf("baseline: %v", err)
	}
	s.Notef("baseline: %s", baseline)

	token, err := e.memberToken(ctx, j.rotatedSA)
	if err != nil {
		s.Fatalf("minting the new token: %v", err)
	}
	if err := e.writeToken(ctx, j, token); err != nil {
		s.Fatalf("writing the new token to Secret %s/%s: %v", ClusterSecretNamespace, name, err)
	}
	if err := e.member.RevokeServiceAccount(ctx, memberNamespace, j.initialSA); err != nil {
		s.Fatalf("revoking the old token (ServiceAccount %s/%s): %v", memberNamespace, j.initialSA, err)
	}
	s.Notef("rotated: Secret %s/%s holds a token of ServiceAccount %s, then %s (the old token's) was deleted and recreated", ClusterSecretNamespace, name, j.rotatedSA, j.initialSA)

	// From before the kill (see restartMemberAndCreateNode).
	restartMark := len(cm.Log())
	r, err := e.restartMemberAndCreateNode(ctx, name+"-after")
	if err != nil {
		s.Fatalf("%v", err)
	}
	killed, restarted, want := r.killed, r.restarted, r.nodes
	s.Timing("member-restart", restarted.Sub(killed))
	// What the controller-manager logs from here on, it logs with the
	// Node in place.
	nodeMark := len(cm.Log())

	if b == Patched {
		rotationPatched(ctx, s, e, cm, name, baseline, want, restartMark, killed, restarted)
	} else {
		rotationPristine(ctx, s, e, cm, name, want, restartMark, nodeMark)
		// The pristine Cluster's status does not change, so only time
		// shows that health checks pass again: Ready holding until
		// readyProof does (see holdReady).
		readyProof := killed.Add(clusterFailureThreshold + 2*DefaultStatusUpdateFrequency)
		if err := e.holdReady(ctx, name, baseline, readyProof); err != nil {
			s.Errorf("short-lived path: %v", err)
		} else {
			s.Notef("short-lived path: the Cluster stayed Ready (condition unchanged since %s) through %s after the member went down",
				baseline.ReadySince, clusterFailureThreshold+2*DefaultStatusUpdateFrequency)
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
func rotationPatched(ctx context.Context, s *e2ereport.Run, e *env, cm *controllerManager, name string, baseline ClusterStatus, want int64, mark int, killed, restarted time.Time) {
	st, err := e.waitCollected(ctx, name, want, recoverTimeout)
	if err != nil {
		s.Outcome(e2ereport.Fail, "long-lived path did not recover: %v", err)
		return
	}
	s.Timing("member-kill-to-recovered", time.Since(killed))
	// The cluster-status controller collects nodes only in a sync whose
	// health check passed, so the new count shows the short-lived path
	// works after the restart; the unchanged transition time shows Ready
	// never flipped on the way.
	if st.ReadySince != baseline.ReadySince {
		s.Errorf("short-lived path: the Ready condition changed during the rotation: %s (baseline %s)", st, baseline)
	} else {
		s.Notef("short-lived path: the Cluster stayed Ready (condition unchanged since %s); the new node count was collected in a sync whose health check passed", baseline.ReadySince)
	}
	s.Timing("restart-to-recovered", time.Since(restarted))
	refused := Lines(cm.Log(), mark, NodeInformerUnauthorized)
	s.Notef("long-lived path recovered: %s; node reflector errors with 401 after the restart: %d", st, len(refused))
	if lines := Lines(cm.Log(), mark, MemberTokenPickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}
	if m, err := cm.metrics(ctx); err == nil {
		cluster := map[string]string{"cluster": name}
		s.Notef("metrics: %s=%v %s=%v %s=%v", MemberUnauthorized, m.Sum(MemberUnauthorized, cluster),
			MemberUnauthorizedRecovered, m.Sum(MemberUnauthorizedRecovered, cluster),
			MemberUnauthorizedPersisted, m.Sum(MemberUnauthorizedPersisted, cluster))
	}
	s.Outcome(e2ereport.Pass, "GREEN: the Node created after the restart reached status.nodeSummary")
}

func rotationPristine(ctx context.Context, s *e2ereport.Run, e *env, cm *controllerManager, name string, want int64, restartMark, nodeMark int) {
	created := time.Now()
	obs, err := e.observeBlind(ctx, cm, name, want, nodeMark)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Timing("blind-window", time.Since(created))
	if obs.sawNode {
		s.Outcome(e2ereport.Pass, "the pristine binary saw the Node created after the restart (%s): the suite no longer reproduces the bug", obs.last)
		return
	}
	s.Notef("evidence: %s", plainest(Lines(cm.Log(), nodeMark, NodeListUnauthorized), []string{obs.refusal})[0])
	s.Outcome(e2ereport.RedAsExpected, "RED: status.nodeSummary.totalNum stayed %d while the member had %d Nodes; %d status periods after the node reflector was refused (401) with the Node in place, it was still missing (node reflector 401s since the restart: %d)",
		obs.last.Nodes, want, blindSettlePeriods, len(Lines(cm.Log(), restartMark, NodeInformerUnauthorized)))
}

// blindObservation is what observeBlind saw.
type blindObservation struct {
	sawNode bool
	// refusal is the first node reflector 401 logged after the Node was
	// created (redacted).
	refusal string
	last    ClusterStatus
}

// observeBlind watches a controller-manager that should not see the Node
// counted in nodes. The window is as short as a convincing negative allows:
// it ends blindSettlePeriods status periods after the node reflector was
// refused (401) at least once after the Node existed, which shows it tried
// again with its frozen token and failed; seeing the Node at any point ends
// it early. The reflector's retry may take up to reflectorRetryBound. (The
// Ready check that follows in testRotation extends the observation to
// clusterFailureThreshold after the restart in any case.)
func (e *env) observeBlind(ctx context.Context, cm *controllerManager, name string, nodes int64, mark int) (blindObservation, error) {
	var obs blindObservation
	deadline := time.Now().Add(reflectorRetryBound)
	var refusedAt time.Time
	for {
		st, err := e.clusterStatus(ctx, name)
		if err != nil {
			return obs, fmt.Errorf("reading cluster %s: %w", name, err)
		}
		obs.last = st
		if st.HasNodeSummary && st.Nodes == nodes {
			obs.sawNode = true
			return obs, nil
		}
		if obs.refusal == "" {
			if lines := Lines(cm.Log(), mark, NodeInformerUnauthorized); len(lines) > 0 {
				obs.refusal, refusedAt = lines[0], time.Now()
			}
		}
		switch {
		case obs.refusal != "" && time.Since(refusedAt) >= blindSettlePeriods*DefaultStatusUpdateFrequency:
			return obs, nil
		case cm.Exited():
			return obs, fmt.Errorf("%s exited (code %d) during the observation", cm.Name(), cm.ExitCode())
		case time.Now().After(deadline):
			return obs, fmt.Errorf("inconclusive: the node reflector logged no 401 within %s after the Node was created, and the Node was not seen either (last: %s)", reflectorRetryBound, st)
		}
		select {
		case <-ctx.Done():
			return obs, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}
