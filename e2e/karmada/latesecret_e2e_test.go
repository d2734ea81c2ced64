//go:build e2e

package karmada

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// testLateSecret revokes the member's token first and restarts the member,
// so the Secret holds a rejected token for a while; only once the node
// informer has been refused after the restart does the new token arrive.
// The patched binary must recover once the Secret holds it, without
// exiting: its own-credential guard (default flags) ignores member 401s.
func testLateSecret(t *testing.T, e *env) {
	s := e.begin(t, "late-secret", Patched, e2ereport.Pass)
	ctx := t.Context()
	name := "late-secret"

	j := e.join(t, name)
	cm := e.startControllerManager(t, Patched, name)
	baseline, err := e.baseline(ctx, name)
	if err != nil {
		s.Fatalf("baseline: %v", err)
	}
	s.Notef("baseline: %s", baseline)
	cluster := map[string]string{"cluster": name}

	if err := e.member.RevokeServiceAccount(ctx, memberNamespace, j.initialSA); err != nil {
		s.Fatalf("revoking the token in the Secret (ServiceAccount %s/%s): %v", memberNamespace, j.initialSA, err)
	}
	// From before the kill (see restartMemberAndCreateNode).
	mark := len(cm.Log())
	r, err := e.restartMemberAndCreateNode(ctx, name+"-after")
	if err != nil {
		s.Fatalf("%v", err)
	}
	killed, restarted, want := r.killed, r.restarted, r.nodes
	s.Timing("member-restart", restarted.Sub(killed))

	// The condition for the Secret's update: the node informer, the
	// long-lived path, has met the member's 401 after the restart and got
	// it back although the Secret was re-read (there was no other token
	// yet), so it is in the reflector's backoff when the new token comes.
	var refusal []string
	err = wait.PollUntilContextTimeout(ctx, pollInterval, reflectorRetryBound, true, func(context.Context) (bool, error) {
		refusal = Lines(cm.Log(), mark, NodeInformerUnauthorized)
		return len(refusal) > 0, nil
	})
	if err != nil {
		s.Fatalf("the node informer met no 401 within %s after the member's restart: %v", reflectorRetryBound, err)
	}
	s.Timing("member-kill-to-informer-401", time.Since(killed))
	s.Notef("evidence: %s", plainest(Lines(cm.Log(), mark, NodeListUnauthorized), refusal)[0])
	if lines := Lines(cm.Log(), 0, MemberTokenRejected); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}

	token, err := e.memberToken(ctx, j.rotatedSA)
	if err != nil {
		s.Fatalf("minting the new token: %v", err)
	}
	if err := e.writeToken(ctx, j, token); err != nil {
		s.Fatalf("writing the new token to Secret %s/%s: %v", ClusterSecretNamespace, name, err)
	}
	written := time.Now()
	st, err := e.waitCollected(ctx, name, want, recoverTimeout)
	if err != nil {
		s.Outcome(e2ereport.Fail, "did not recover after the Secret got the new token: %v", err)
		return
	}
	s.Timing("secret-to-recovered", time.Since(written))
	s.Timing("restart-to-recovered", time.Since(restarted))
	s.Notef("recovered: %s", st)

	m, err := cm.metrics(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	if cm.Exited() {
		s.Errorf("%s exited (code %d) on a member's 401s", cm.Name(), cm.ExitCode())
	}
	if m.Sum(MemberUnauthorizedPersisted, cluster) == 0 {
		s.Errorf("%s is 0: no member 401 reached the controller-manager, so its guard was not put to the test", MemberUnauthorizedPersisted)
	}
	if tripped := m.Sum(OwnGuardTripped, nil); tripped != 0 {
		s.Errorf("%s = %v: the own-credential guard counted a member's 401s", OwnGuardTripped, tripped)
	}
	s.Notef("metrics: %s=%v %s=%v %s=%v", MemberUnauthorizedPersisted, m.Sum(MemberUnauthorizedPersisted, cluster),
		MemberUnauthorizedRecovered, m.Sum(MemberUnauthorizedRecovered, cluster), OwnGuardTripped, m.Sum(OwnGuardTripped, nil))
	s.Outcome(e2ereport.Pass, "GREEN: recovered once the Secret held the new token; the controller-manager kept running (own-credential guard at its defaults)")
}
