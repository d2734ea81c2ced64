//go:build e2e

package karmadacp

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// testLateSecret is the rotation suite's late-secret scenario on the real
// control plane, patched only (the pristine build never re-reads the
// Secret, late or not: the propagation scenario shows that). member1's
// token is revoked first and member1 restarted, so the Secret holds a
// rejected token while the execution controller's member informer is
// refused; only then does the new token reach the Secret. The patched
// build must recover from the Secret alone: a later update lands and the
// member status is aggregated, and the controller-manager keeps running
// (its own-credential guard, at its defaults, ignores member 401s).
func testLateSecret(t *testing.T) {
	e := newEnv(t, karmadacp.Patched)
	s := begin(t, "late-secret", string(karmadacp.Patched), standIns...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	m := e.joinMember1(ctx, s)
	if _, err := e.cp.API.Dynamic().Resource(PropagationPolicyGVR).Namespace(workloadNamespace).Create(ctx, PropagationPolicy(workloadNamespace, policyName, memberName), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating PropagationPolicy %s/%s: %v", workloadNamespace, policyName, err)
	}
	if _, err := e.cp.API.Kubernetes().AppsV1().Deployments(workloadNamespace).Create(ctx, Deployment(workloadNamespace, "web", policyName, 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	if _, err := e.waitLanded(ctx, "web", 1, landTimeout); err != nil {
		s.Fatalf("before the revocation: %v", err)
	}

	cm := e.cp.Process(karmadacp.ControllerManager)
	metricsURL := e.cp.MetricsURL(karmadacp.ControllerManager)
	before, err := karmada.ScrapeMetrics(ctx, metricsURL)
	if err != nil {
		s.Fatalf("%v", err)
	}
	from := m.Account()
	if err := m.Revoke(ctx); err != nil {
		s.Fatalf("%v", err)
	}
	s.Notef("member1's ServiceAccount %s revoked first: the Secret holds a token the member rejects", from)
	// From before the kill: what the controller-manager logs from here on,
	// it logs about the restarted member.
	mark := len(cm.Log())
	killed := time.Now()
	if err := e.member.Restart(ctx); err != nil {
		s.Fatalf("restarting %s: %v", memberName, err)
	}
	s.Timing("member-restart", time.Since(killed))

	// The condition for the Secret's update: the member Deployment
	// informer, the long-lived path, has met the member's 401 after the
	// restart, although the patched build re-read the Secret (there was no
	// other token yet), so it is in the reflector's backoff when the new
	// token comes.
	var refusal []string
	if err := wait.PollUntilContextTimeout(ctx, poll, reflectorRetryBound, true, func(context.Context) (bool, error) {
		refusal = karmada.Lines(cm.Log(), mark, MemberWatchUnauthorized)
		return len(refusal) > 0, nil
	}); err != nil {
		s.Fatalf("the member Deployment informer met no 401 within %s after the member's restart: %v", reflectorRetryBound, err)
	}
	s.Timing("member-kill-to-informer-401", time.Since(killed))
	s.Notef("evidence: %s", refusal[0])
	if lines := karmada.Lines(cm.Log(), 0, karmada.MemberTokenRejected); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}

	rot, err := m.Replace(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	written := time.Now()
	s.Notef("late: the Secret now holds a token of ServiceAccount %s", rot.To)
	if err := e.scale(ctx, "web", 2); err != nil {
		s.Fatalf("updating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	if _, err := e.waitLanded(ctx, "web", 2, landTimeout); err != nil {
		s.Outcome(e2ereport.Fail, "the update did not land after the Secret got the new token: %v", err)
		return
	}
	s.Timing("secret-to-update-landed", time.Since(written))
	if err := e.writeMemberStatus(ctx, "web"); err != nil {
		s.Fatalf("writing the status of Deployment %s/web on %s: %v", workloadNamespace, memberName, err)
	}
	if err := e.waitAggregated(ctx, map[string]int32{"web": 2}, statusTimeout, nil); err != nil {
		s.Outcome(e2ereport.Fail, "the member status was not aggregated after the Secret got the new token: %v", err)
		return
	}
	s.Timing("secret-to-aggregated", time.Since(written))

	after, err := karmada.ScrapeMetrics(ctx, metricsURL)
	if err != nil {
		s.Fatalf("%v", err)
	}
	d := after.MemberCredential(memberName).Sub(before.MemberCredential(memberName))
	s.Notef("membercred counters over the late rotation: %s", d)
	if cm.Exited() {
		s.Errorf("%s exited (code %d) on a member's 401s", cm.Name(), cm.ExitCode())
	}
	if d.Persisted == 0 {
		s.Errorf("no member 401 persisted: the Secret's rejected token never reached the controller-manager, so the scenario tested nothing")
	}
	if tripped := after.Sum(karmada.OwnGuardTripped, nil); tripped != 0 {
		s.Errorf("%s = %v: the own-credential guard counted a member's 401s", karmada.OwnGuardTripped, tripped)
	}
	s.Outcome(e2ereport.Pass, "GREEN: recovered once the Secret held the new token (update landed, status aggregated); the controller-manager kept running")
}
