//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

const (
	// agentPolicy is the agent scenarios' PropagationPolicy, placing the
	// Deployments labelled for it on the Pull member.
	agentPolicy = "agent"
	// agentLeaseRenew is how often a working agent renews its Cluster's
	// lease: --cluster-lease-duration (40s) times
	// --cluster-lease-renew-interval-fraction (0.25), upstream's defaults,
	// which the harness keeps.
	agentLeaseRenew = 10 * time.Second
	// pristineAgentWindow is the least the pristine agent is watched after
	// the update: three lease renewals, where the patched agent applies the
	// update in about a second.
	pristineAgentWindow = 3 * agentLeaseRenew
	// agentGuardThreshold is the patched agent's
	// --own-credential-guard-threshold in agent-own-credential, with
	// --own-credential-guard-min-duration=none: the second persisting 401
	// makes it act.
	agentGuardThreshold = 2
	// agentExitTimeout bounds the patched agent's exit after its token was
	// revoked: its status sync every 2 s and lease renewal every 10 s each
	// meet the 401 within seconds; the rest is margin for a busy runner.
	agentExitTimeout = 2 * time.Minute
)

// agentStandIns are stated in the agent scenarios' notes.
var agentStandIns = []string{
	"stand-in: karmada-agent runs as a process beside member1 and reaches it with member1's admin kubeconfig (KUBECONFIG), where a pod would use its in-cluster ServiceAccount bound to the agent's ClusterRole",
	"stand-in: the agent's karmada-apiserver credential is a token of its own ServiceAccount karmada-system/karmada-agent-member1 (TokenRequest API, bound to cluster-admin: broader than what karmadactl register grants; what the scenario revokes is the token, not a permission), inline in a kubeconfig in a kubelet-like Secret volume (key karmada-kubeconfig, ..data symlink to a timestamped folder, swapped atomically on update); --report-secrets=None (the default's token Secrets need the member's kube-controller-manager)",
}

// agentUnauthorized is a request of the agent's refused with 401: a
// reflector's list, a lease renewal, a status update.
var agentUnauthorized = regexp.MustCompile(`Unauthorized`)

// agentTokenPickedUp is the patched agent's line when it follows a new
// token in its kubeconfig (pkg/membercred).
var agentTokenPickedUp = regexp.MustCompile(`Picked up a rotated bearer token from the kubeconfig`)

// joinPull joins member1 in Pull mode (karmada-agent beside it) with the
// agent's extra flags and waits until its Cluster is Ready; a failure
// ends the scenario. The agent's version is recorded with the others'.
func (e *env) joinPull(ctx context.Context, s *e2ereport.Run, extra ...string) *karmadacp.PullMember {
	return e.joinPullWith(ctx, s, e.cp.JoinPull, extra...)
}

// joinPullWith is joinPull through join (ControlPlane.JoinPull or
// JoinPullCertificate).
func (e *env) joinPullWith(ctx context.Context, s *e2ereport.Run, join func(context.Context, string, *controlplane.Cluster, ...string) (*karmadacp.PullMember, error), extra ...string) *karmadacp.PullMember {
	v, err := karmada.BinaryVersion(ctx, e.target.Binaries[karmadacp.Agent])
	if err != nil {
		s.Fatalf("%v", err)
	}
	recorder.SetVersion(fmt.Sprintf("%s (%s)", karmadacp.Agent, e.build), v)
	begin := time.Now()
	pm, err := join(ctx, memberName, e.member, extra...)
	if err != nil {
		s.Fatalf("%v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, readyTimeout, true, func(ctx context.Context) (bool, error) {
		st, err := e.clusterStatus(ctx)
		return err == nil && st.Ready, nil
	}); err != nil {
		s.Fatalf("Cluster %s (Pull) not Ready within %s: %v; agent log: %s", memberName, readyTimeout, err, pm.Agent().LogFile())
	}
	s.Timing("join-to-ready", time.Since(begin))
	u, err := e.cp.API.Dynamic().Resource(karmadacp.ClusterGVR).Get(ctx, memberName, metav1.GetOptions{})
	if err != nil {
		s.Fatalf("reading Cluster %s: %v", memberName, err)
	}
	if mode, _, _ := unstructured.NestedString(u.Object, "spec", "syncMode"); mode != "Pull" {
		s.Fatalf("Cluster %s registered by the agent has syncMode %q, want Pull", memberName, mode)
	}
	return pm
}

// propagateToPull creates the agent scenarios' PropagationPolicy and
// Deployment web on Karmada and waits until the agent applied it to the
// member (the Deployment there, its Work Applied).
func (e *env) propagateToPull(ctx context.Context, s *e2ereport.Run) {
	if _, err := e.cp.API.Dynamic().Resource(PropagationPolicyGVR).Namespace(workloadNamespace).Create(ctx, PropagationPolicy(workloadNamespace, agentPolicy, memberName), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating PropagationPolicy %s/%s: %v", workloadNamespace, agentPolicy, err)
	}
	created := time.Now()
	if _, err := e.cp.API.Kubernetes().AppsV1().Deployments(workloadNamespace).Create(ctx, Deployment(workloadNamespace, "web", agentPolicy, 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	work, err := e.waitLanded(ctx, "web", 1, landTimeout)
	if err != nil {
		s.Fatalf("before any rotation: %v", err)
	}
	s.Timing("first-propagation", time.Since(created))
	s.Notef("before the rotation: Deployment %s/web applied to %s by the agent (Work %s Applied, Cluster syncMode Pull)", workloadNamespace, memberName, work)
}

// firstSeen watches p's log from mark on for a line matching re and
// remembers the first one and when it was seen (to 100 ms), until ctx
// ends. get returns "" until then.
func firstSeen(ctx context.Context, p *controlplane.Process, mark int, re *regexp.Regexp) (get func() (string, time.Time)) {
	var (
		mu   sync.Mutex
		line string
		at   time.Time
	)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if lines := karmada.Lines(p.Log(), mark, re); len(lines) > 0 {
				mu.Lock()
				line, at = lines[0], time.Now()
				mu.Unlock()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() (string, time.Time) {
		mu.Lock()
		defer mu.Unlock()
		return line, at
	}
}

// testAgentRotation: member1 joined in Pull mode (karmada-agent registers
// its Cluster and applies its Works); a Deployment propagated to it. The
// agent's own karmada-apiserver credential is rotated as an operator (or
// the kubelet, for a renewed Secret) would: a new ServiceAccount's token in
// a new kubeconfig, published into the Secret volume by an atomic ..data
// swap, then the old ServiceAccount deleted and recreated until
// karmada-apiserver rejects the old token. karmada-apiserver is then
// SIGKILLed and restarted: a watch authenticated before the revocation
// outlives it (a request is authenticated once, when it starts), so only
// reconnecting shows the credential a process holds now, as any
// karmada-apiserver rollout (or the watches' 5-10 min timeout) would. Then
// the Deployment is updated on Karmada. Patched: the agent follows the new
// token and applies the update to the member, same process. Pristine: it
// keeps the token it read at start, every request is refused (401): the
// update never reaches the member and the Cluster's lease is not renewed,
// while the process keeps running (RED).
func testAgentRotation(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b)
	s := begin(t, "agent-rotation", string(b), slices.Concat(standIns, agentStandIns)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	pm := e.joinPull(ctx, s)
	agent := pm.Agent()
	pid := agent.Pid()
	e.propagateToPull(ctx, s)

	rotateMark := len(agent.Log())
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	refused := firstSeen(watchCtx, agent, rotateMark, agentUnauthorized)
	rot, err := pm.Rotate(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Mark(e2ereport.EventRotation)
	s.Notef("rotated: the agent's kubeconfig (Secret volume, ..data swapped) holds a token of ServiceAccount %s/%s; %s (the old token's) was deleted and recreated, karmada-apiserver rejects the old token (%.1f s from the swap)",
		karmadacp.SystemNamespace, rot.To, rot.From, rot.Revoked.Sub(rot.Written).Seconds())

	leaseAtRestart, restarted, updated := e.restartThenUpdate(ctx, s, pm)

	if b == karmadacp.Patched {
		agentRotationPatched(ctx, s, e, pm, pid, rot.Revoked, agentTokenPickedUp, rotateMark, leaseAtRestart, restarted, updated)
	} else {
		agentRotationPristine(ctx, s, e, pm, refused, rotateMark, leaseAtRestart, updated)
	}
}

// restartThenUpdate SIGKILLs and restarts karmada-apiserver, so that every
// watch reconnects with the credential the agent holds now (a watch
// authenticated before a revocation outlives it), reads the Cluster's
// lease, and scales Karmada's web to 2: what the agent scenarios then
// watch land or not.
func (e *env) restartThenUpdate(ctx context.Context, s *e2ereport.Run, pm *karmadacp.PullMember) (leaseAtRestart, restarted, updated time.Time) {
	killed := time.Now()
	if err := e.cp.API.Restart(ctx); err != nil {
		s.Fatalf("restarting karmada-apiserver: %v", err)
	}
	restarted = time.Now()
	s.Timing("karmada-apiserver-restart", restarted.Sub(killed))
	leaseAtRestart, err := pm.LeaseRenewed(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	updated = time.Now()
	if err := e.scale(ctx, "web", 2); err != nil {
		s.Fatalf("updating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	s.Notef("karmada-apiserver SIGKILLed and restarted (every watch reconnects), then Karmada's %s/web scaled from 1 to 2 replicas", workloadNamespace)
	return leaseAtRestart, restarted, updated
}

// agentRotationPatched checks the patched agent after a rotation whose old
// credential was refused from revoked on: the update lands, the lease is
// renewed, its log has a pickedUp line, and it is the same process.
func agentRotationPatched(ctx context.Context, s *e2ereport.Run, e *env, pm *karmadacp.PullMember, pid int, revoked time.Time, pickedUp *regexp.Regexp, mark int, leaseAtRestart, restarted, updated time.Time) {
	agent := pm.Agent()
	work, err := e.waitLanded(ctx, "web", 2, landTimeout)
	if err != nil {
		s.Outcome(e2ereport.Fail, "the update did not reach the member: %v", err)
		return
	}
	landed := time.Since(updated)
	s.Mark(e2ereport.EventRecovery)
	s.Timing("update-to-applied", landed)
	s.Timing("restart-to-applied", time.Since(restarted))
	s.Timing("revocation-to-applied", time.Since(revoked))
	s.Notef("the update landed: %s/web has 2 replicas on %s, Work %s Applied, %.1f s after the update (bound %s)", workloadNamespace, memberName, work, landed.Seconds(), landTimeout)
	// The lease shows the agent's own requests carry the new token too.
	var renewed time.Time
	if err := wait.PollUntilContextTimeout(ctx, poll, 2*agentLeaseRenew+landTimeout/4, true, func(ctx context.Context) (bool, error) {
		var err error
		renewed, err = pm.LeaseRenewed(ctx)
		return err == nil && renewed.After(leaseAtRestart), nil
	}); err != nil {
		s.Errorf("the Cluster's lease was not renewed after the restart (renewTime %s): %v", leaseAtRestart.Format(time.RFC3339), err)
	} else {
		s.Notef("the Cluster's lease renewed at %s, after the restart (renewTime then %s)", renewed.Format(time.RFC3339), leaseAtRestart.Format(time.RFC3339))
	}
	if lines := karmada.Lines(agent.Log(), mark, pickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	} else {
		s.Errorf("no %q line since the rotation", pickedUp)
	}
	s.Notef("agent 401s logged since the rotation: %d", len(karmada.Lines(agent.Log(), mark, agentUnauthorized)))
	if agent.Exited() || pm.Agent() != agent || agent.Pid() != pid {
		s.Outcome(e2ereport.Fail, "the agent did not keep running as the same process (pid %d, exited %t, code %d)", pid, agent.Exited(), agent.ExitCode())
		return
	}
	s.Notef("no restart: the agent is still pid %d", pid)
	s.Outcome(e2ereport.Pass, "GREEN: the agent followed its rotated kubeconfig and applied the update %.1f s after it, without a restart", landed.Seconds())
}

// agentRotationPristine watches the pristine agent after the rotation: the
// update must not land, a 401 must be logged, the lease must stay stale
// while the process runs.
func agentRotationPristine(ctx context.Context, s *e2ereport.Run, e *env, pm *karmadacp.PullMember, refused func() (string, time.Time), mark int, leaseAtRestart, updated time.Time) {
	agent := pm.Agent()
	deadline := updated.Add(reflectorRetryBound)
	// closed: a 401 logged since the rotation, at least blindSettle ago,
	// and pristineAgentWindow since the update.
	closed := func() bool {
		line, at := refused()
		return line != "" && time.Since(updated) >= pristineAgentWindow && time.Since(at) >= blindSettle
	}
	var detail string
	for !closed() {
		_, done, d := e.landed(ctx, "web", 2)
		switch {
		case done:
			s.Outcome(e2ereport.Pass, "the pristine agent applied the update after its credential was rotated: the scenario no longer reproduces the bug")
			return
		case agent.Exited():
			s.Outcome(e2ereport.Pass, "the pristine agent exited (code %d) after its credential was rotated: the scenario no longer reproduces the bug (a kubelet would restart it with the new kubeconfig)", agent.ExitCode())
			return
		case time.Now().After(deadline):
			s.Fatalf("inconclusive: the update did not land within %s and the agent logged no 401 since the rotation (last: %s)", reflectorRetryBound, d)
		}
		detail = d
		select {
		case <-ctx.Done():
			s.Fatalf("%v", ctx.Err())
		case <-time.After(poll):
		}
	}
	_, at := refused()
	s.MarkAt(e2ereport.EventFirstFailure, at)
	s.Timing("window", time.Since(updated))
	s.Notef("evidence: %s", firstLine(agent.Log(), mark, karmada.ListUnauthorized, agentUnauthorized))
	// The control plane did its part: the Work the agent should apply
	// carries the update.
	if replicas, err := e.workReplicas(ctx, "web"); err != nil {
		s.Errorf("reading the Work of %s/web: %v", workloadNamespace, err)
	} else if replicas != 2 {
		s.Fatalf("inconclusive: the Work of %s/web in karmada-es-%s carries %d replicas, not the update's 2: the update never reached the agent's side", workloadNamespace, memberName, replicas)
	} else {
		s.Notef("the Work of %s/web in karmada-es-%s carries the update (2 replicas); the member's Deployment still has 1", workloadNamespace, memberName)
	}
	lease, err := pm.LeaseRenewed(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	if lease.After(leaseAtRestart) {
		s.Outcome(e2ereport.Fail, "the Cluster's lease was renewed after the restart (%s): the agent's requests are not all refused, so the missing update is not the frozen credential", lease.Format(time.RFC3339))
		return
	}
	st, _ := e.clusterStatus(ctx)
	s.Outcome(e2ereport.RedAsExpected, "RED: %.0f s after the update it has not reached the member (%s); the Cluster's lease not renewed since %s (%.0f s, a working agent renews every %s; Cluster Ready=%t); the agent still runs (pid %d), %d 401s logged since the rotation",
		time.Since(updated).Seconds(), detail, lease.Format(time.RFC3339), time.Since(lease).Seconds(), agentLeaseRenew, st.Ready, agent.Pid(), len(karmada.Lines(agent.Log(), mark, agentUnauthorized)))
}

// testAgentOwnCredential: the patched agent, with
// --own-credential-guard-threshold=2 --own-credential-guard-min-duration=none,
// has its token revoked and no new one published: its credential is
// rejected for good, and the guard must make it exit non-zero with a line
// naming its own credential, so that the kubelet restarts it (with the
// Secret an operator fixed) instead of leaving a Running agent whose every
// request is refused.
func testAgentOwnCredential(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b)
	s := begin(t, "agent-own-credential", string(b), slices.Concat(standIns, agentStandIns)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	pm := e.joinPull(ctx, s,
		fmt.Sprintf("--own-credential-guard-threshold=%d", agentGuardThreshold),
		"--own-credential-guard-min-duration=none")
	agent := pm.Agent()
	s.Notef("the agent runs with --own-credential-guard-threshold=%d --own-credential-guard-min-duration=none (action: the default, exit)", agentGuardThreshold)
	if err := pm.Revoke(ctx); err != nil {
		s.Fatalf("%v", err)
	}
	revoked := time.Now()
	s.Notef("the agent's ServiceAccount %s/%s deleted and recreated, no new kubeconfig published: karmada-apiserver rejects its token", karmadacp.SystemNamespace, pm.Account())
	select {
	case <-agent.Done():
	case <-time.After(agentExitTimeout):
		s.Outcome(e2ereport.Fail, "still running %s after its own token was revoked", agentExitTimeout)
		return
	case <-ctx.Done():
		s.Fatalf("%v", ctx.Err())
	}
	toExit := time.Since(revoked)
	s.Timing("revocation-to-exit", toExit)
	lines := karmada.Lines(agent.Log(), 0, karmada.OwnCredentialExit)
	code := agent.ExitCode()
	if code == 0 || len(lines) == 0 {
		s.Outcome(e2ereport.Fail, "exited with code %d and %d guard lines, want a non-zero code and the guard's line (%s)", code, len(lines), karmada.OwnCredentialExit)
		return
	}
	s.Notef("evidence: %s", lines[0])
	s.Outcome(e2ereport.Pass, "GREEN: exited with code %d through the own-credential guard %.1f s after its token was revoked", code, toExit.Seconds())
}

// workReplicas is spec.replicas of Deployment name's manifest in its Work
// in member1's execution namespace.
func (e *env) workReplicas(ctx context.Context, name string) (int64, error) {
	works, err := e.cp.API.Dynamic().Resource(WorkGVR).Namespace("karmada-es-"+memberName).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	for _, w := range works.Items {
		manifests, _, _ := unstructured.NestedSlice(w.Object, "spec", "workload", "manifests")
		for _, raw := range manifests {
			m, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			o := unstructured.Unstructured{Object: m}
			if o.GetKind() != "Deployment" || o.GetNamespace() != workloadNamespace || o.GetName() != name {
				continue
			}
			replicas, _, err := unstructured.NestedInt64(m, "spec", "replicas")
			return replicas, err
		}
	}
	return 0, fmt.Errorf("no Work in karmada-es-%s carries Deployment %s/%s", memberName, workloadNamespace, name)
}
