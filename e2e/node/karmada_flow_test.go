//go:build e2e

package node

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	e2ekcp "github.com/holdfast-dist/holdfast/e2e/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/node"
)

const (
	memberClusterNamespace = "karmada-cluster"
	memberClusterName      = "member1"
	// webPolicy places the flow's Deployment on member1.
	webPolicy = "web"
	webName   = "web"
	// cmContainer is the chart's controller-manager container.
	cmContainer = karmadaRelease + "-controller-manager"
	// landTimeout bounds holdfast's update reaching member1 after the
	// member's restart: detector, scheduler, binding and execution
	// controllers take well under a second each when they work; the rest
	// is margin for two shared cores.
	landTimeout = 2 * time.Minute
	// pristineLandWindow is how long the pristine build gets for what the
	// patched one does in seconds: the execution controller retries a
	// failed Work with exponential backoff from 5 ms, so a minute holds a
	// dozen retries, each refused the same way (as e2e/karmadacp's).
	pristineLandWindow = time.Minute
	// The flows' updates of web, each a replica count no earlier step
	// used, so that landed() tells them apart: the pristine build's two
	// after its rotation, holdfast's after its own, after the CA rotation,
	// then the own-credential flow's two.
	greenUpdate, caUpdate, ownBeforeUpdate, ownAfterUpdate int32 = 4, 5, 6, 7
	// auditLogPath is e2e/node/auditrender's LogPath.
	auditLogPath = "/var/log/holdfast-audit/audit.log"
	// ownAccount is the controller-manager's own ServiceAccount on
	// karmada-apiserver in the own-credential flow, ownSecret the Secret
	// (on the node's cluster) holding its kubeconfig.
	ownAccount = "holdfast-controller-manager"
	ownSecret  = karmadaRelease + "-controller-manager-own-kubeconfig"
	// ownGuardThreshold and ownGuardMinDuration are set through the
	// chart's controllerManager.ownCredentialGuard values. Leader election
	// renews every 2 s and gives up 10 s after its last success
	// (karmada's defaults), which exits the process too ("leaderelection
	// lost"); 3 and 3 s let the guard, not leader election, end it, so
	// the line says which path ran.
	ownGuardThreshold   = 3
	ownGuardMinDuration = 3 * time.Second
	// ownExitBound bounds the guard's exit after the revocation: the
	// server's token cache (10 s), three renewals, the minimum and its
	// jitter; the rest is margin.
	ownExitBound = 2 * time.Minute
)

// pristineUpdates are the pristine build's updates after its rotation.
var pristineUpdates = []int32{2, 3}

// karmadaFlow is what the flows after the install share: one release on
// one node, member1 joined.
type karmadaFlow struct {
	n                              *node.Node
	chart, renderer                string
	member                         *karmadaMember
	holdfast, pristine             node.Image
	holdfastLayout, pristineLayout string
	kubeMu                         sync.Mutex           // the estimator's and the agent's flows run side by side
	kube                           kubernetes.Interface // karmada-apiserver
}

func (f *karmadaFlow) karmadaKube(ctx context.Context) (kubernetes.Interface, error) {
	f.kubeMu.Lock()
	defer f.kubeMu.Unlock()
	if f.kube != nil {
		return f.kube, nil
	}
	cfg, err := karmadaConfig(ctx, f.n)
	if err != nil {
		return nil, err
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f.kube = k
	return k, nil
}

// waitWithin polls cond every 500 ms for at most d.
func waitWithin(ctx context.Context, d time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting %s for %s: %w", d, what, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil
}

// cmPod is the one live controller-manager pod (no deletion pending).
func (f *karmadaFlow) cmPod(ctx context.Context) (*corev1.Pod, error) {
	pods, err := f.n.Kubernetes().CoreV1().Pods(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, cmContainer+"-") && p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	if len(live) != 1 {
		return nil, fmt.Errorf("%d live controller-manager pods in %s, want 1", len(live), karmadaNamespace)
	}
	return &live[0], nil
}

// cmLog is the controller-manager container's log (its current run, or
// the previous one).
func (f *karmadaFlow) cmLog(ctx context.Context, pod string, previous bool) string {
	raw, err := f.n.Kubernetes().CoreV1().Pods(karmadaNamespace).GetLogs(pod, &corev1.PodLogOptions{Container: cmContainer, Previous: previous}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	return string(raw)
}

// memberReplicas is web's replica count on member1 (-1: not there).
func (f *karmadaFlow) memberReplicas(ctx context.Context) int32 {
	d, err := f.member.api.Kubernetes().AppsV1().Deployments("default").Get(ctx, webName, metav1.GetOptions{})
	if err != nil {
		return -1
	}
	return ptr.Deref(d.Spec.Replicas, 1)
}

// scale sets web's replicas on Karmada, as a user's update would.
func (f *karmadaFlow) scale(ctx context.Context, replicas int32) error {
	k, err := f.karmadaKube(ctx)
	if err != nil {
		return err
	}
	deployments := k.AppsV1().Deployments("default")
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, webName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(replicas)
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// landed waits up to d for web to have replicas replicas on member1.
func (f *karmadaFlow) landed(ctx context.Context, replicas int32, d time.Duration) error {
	return waitWithin(ctx, d, fmt.Sprintf("Deployment default/%s with %d replicas on %s", webName, replicas, memberClusterName), func() bool {
		return f.memberReplicas(ctx) == replicas
	})
}

// clusterReady is member1's Ready condition and when it last changed.
func (f *karmadaFlow) clusterReady(ctx context.Context) (bool, string) {
	k, err := karmadaClient(ctx, f.n)
	if err != nil {
		return false, err.Error()
	}
	c, err := k.Resource(karmadaClusters).Get(ctx, memberClusterName, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	st, err := karmada.ReadClusterStatus(c)
	if err != nil {
		return false, err.Error()
	}
	return st.Ready, st.ReadySince
}

// writeSecret sets key of member1's Secret on karmada-apiserver.
func (f *karmadaFlow) writeSecret(ctx context.Context, key string, value []byte) error {
	k, err := f.karmadaKube(ctx)
	if err != nil {
		return err
	}
	secrets := k.CoreV1().Secrets(memberClusterNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, memberClusterName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading Secret %s/%s: %w", memberClusterNamespace, memberClusterName, err)
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[key] = value
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// rotate rotates member1's token as an operator does (e2e/karmadacp's
// Member.Rotate): a new ServiceAccount on the member with the same
// rights, its token into the Secret, then the old ServiceAccount revoked
// (deleted and created again) until the member rejects the old token;
// then the member's kube-apiserver restarted, so that every watch the
// controller-manager holds reconnects and re-authenticates. It returns
// when the member is back.
func (f *karmadaFlow) rotate(ctx context.Context, sc *e2ereport.Run) time.Time {
	m := f.member
	m.rotations++
	to := fmt.Sprintf("member1-rotated-%d", m.rotations)
	token, err := m.api.ServiceAccountToken(ctx, memberClusterNamespace, to, 2*time.Hour)
	sc.Check(err)
	sc.Check(m.api.BindClusterAdmin(ctx, memberClusterNamespace, to))
	sc.Check(f.writeSecret(ctx, "token", []byte(token)))
	sc.Check(m.api.RevokeServiceAccount(ctx, memberClusterNamespace, m.account, m.token))
	revoked := time.Now()
	sc.Notef("rotated: Secret %s/%s holds a token of ServiceAccount %s, then %s (the old token's) was deleted and recreated; member1's kube-apiserver SIGKILLed and restarted",
		memberClusterNamespace, memberClusterName, to, m.account)
	m.account, m.token = to, token
	sc.Check(m.api.Restart(ctx))
	return revoked
}

// member401s counts the member's requests answered 401 since from, by
// user agent (a request refused at authentication has no user).
func (f *karmadaFlow) member401s(from time.Time) (int, string) {
	events, err := controlplane.ReadAudit(f.member.auditLog)
	if err != nil {
		return 0, err.Error()
	}
	by := map[string]int{}
	n := 0
	for _, e := range controlplane.ReceivedIn(events, from, time.Now()) {
		if e.ResponseStatus.Code == 401 {
			n++
			agent, _, _ := strings.Cut(e.UserAgent, " ")
			by[agent]++
		}
	}
	return n, fmt.Sprint(by)
}

// first401 is when the member first answered a request 401 since from, as
// its audit log says (zero if it did not, or the log cannot be read): the
// pristine build's first failure after a revocation.
func (f *karmadaFlow) first401(from time.Time) time.Time {
	events, err := controlplane.ReadAudit(f.member.auditLog)
	if err != nil {
		return time.Time{}
	}
	var first time.Time
	for _, e := range controlplane.ReceivedIn(events, from, time.Now()) {
		if e.ResponseStatus.Code == 401 && (first.IsZero() || e.RequestReceived.Before(first)) {
			first = e.RequestReceived
		}
	}
	return first
}

// step is one helm step of the drop-in: the controller-manager pod it
// left running.
type step struct {
	name string
	pod  *corev1.Pod
}

// helmStep runs helm, waits for one live controller-manager pod of the
// wanted image (pristine or not) that is Ready, then watches every pod of
// the release for dropInWatch: Running and Ready (or Succeeded, the
// Jobs'), no container restarting. It reads the controller-manager
// container's /proc/<pid>/status against the chart's securityContext and
// the image's user.
func (f *karmadaFlow) helmStep(ctx context.Context, sc *e2ereport.Run, name string, pristine bool, uid int, args ...string) step {
	begin := time.Now()
	if out, err := f.n.Helm(ctx, args...); err != nil {
		sc.Fatalf("%s: %v\n%s", name, err, out)
	}
	sc.Timing(name+"-helm", time.Since(begin))
	var pod *corev1.Pod
	sc.Check(waitFor(ctx, name+": one Ready controller-manager pod", func() bool {
		p, err := f.cmPod(ctx)
		if err == nil && (p.Spec.Containers[0].Image == f.pristine.Name) == pristine && podReady(p) {
			pod = p
			return true
		}
		return false
	}))
	sc.Timing(name+"-to-ready", time.Since(begin))
	counts, err := f.restartCounts(ctx)
	sc.Check(err)
	// A restart is what the drop-in must never cause. A pod briefly not
	// Ready is noted, not failed: upstream's probes time out after 1 s
	// (the webhook's readiness probe sets no timeout), which a loaded
	// machine misses now and then whatever image the controller-manager
	// runs; every pod must be Ready again at the end.
	ready := time.Now()
	blips := map[string]bool{}
	for time.Since(ready) < dropInWatch {
		now, err := f.restartCounts(ctx)
		sc.Check(err)
		for p, c := range now {
			if c < 0 {
				blips[p] = true
				continue
			}
			if was, ok := counts[p]; ok && was >= 0 && c != was {
				sc.Fatalf("%s: pod %s restarted (%d -> %d) within %s after Ready", name, p, was, c, dropInWatch)
			}
		}
		select {
		case <-ctx.Done():
			sc.Fatalf("%v", ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	sc.Check(waitFor(ctx, name+": every pod of the release Running and Ready", func() bool {
		now, err := f.restartCounts(ctx)
		if err != nil {
			return false
		}
		for _, c := range now {
			if c < 0 {
				return false
			}
		}
		return true
	}))
	if len(blips) > 0 {
		var names []string
		for p := range blips {
			names = append(names, p)
		}
		sort.Strings(names)
		sc.Notef("%s: not Ready for a moment during the watch, Ready again with no restart: %s", name, strings.Join(names, ", "))
	}
	c := pod.Spec.Containers[0]
	var allowEscalation *bool
	if c.SecurityContext != nil {
		allowEscalation = c.SecurityContext.AllowPrivilegeEscalation
	}
	want := wantFor(runAsUser(pod), uid, allowEscalation)
	pid, status := f.containerStatus(ctx, sc, pod)
	for _, d := range checkProcStatus(status, want) {
		sc.Errorf("%s: pod %s, process %d: %s", name, pod.Name, pid, d)
	}
	other := want
	other.UID++
	if len(checkProcStatus(status, other)) == 0 {
		sc.Errorf("%s: process %d's status also matches uid %d: it does not say who runs the controller-manager", name, pid, other.UID)
	}
	sc.Notef("%s: %s Ready, every pod of the release Ready with no restart over %s; process %d: uid %d, CapEff %s, NoNewPrivs %s (chart securityContext: %s)",
		name, c.Image, dropInWatch, pid, want.UID, want.CapEff, want.NoNewPrivs, describeSecurityContext(pod))
	return step{name: name, pod: pod}
}

// describeSecurityContext says what the chart set that /proc can show.
func describeSecurityContext(p *corev1.Pod) string {
	var set []string
	if c := p.Spec.Containers[0].SecurityContext; c != nil {
		if c.RunAsUser != nil {
			set = append(set, fmt.Sprintf("runAsUser %d", *c.RunAsUser))
		}
		if c.AllowPrivilegeEscalation != nil {
			set = append(set, fmt.Sprintf("allowPrivilegeEscalation %t", *c.AllowPrivilegeEscalation))
		}
		if c.ReadOnlyRootFilesystem != nil {
			set = append(set, fmt.Sprintf("readOnlyRootFilesystem %t", *c.ReadOnlyRootFilesystem))
		}
		if c.Capabilities != nil {
			set = append(set, fmt.Sprintf("capabilities %+v", *c.Capabilities))
		}
	}
	if ps := p.Spec.SecurityContext; ps != nil && ps.RunAsUser != nil {
		set = append(set, fmt.Sprintf("pod runAsUser %d", *ps.RunAsUser))
	}
	if len(set) == 0 {
		return "none: the image's user, containerd's default capabilities for root"
	}
	return strings.Join(set, ", ")
}

// containerStatus reads /proc/<pid>/status of the pod's first container's
// main process.
func (f *karmadaFlow) containerStatus(_ context.Context, sc *e2ereport.Run, pod *corev1.Pod) (int, string) {
	pid, status, err := podMainStatus(pod)
	sc.Check(err)
	return pid, status
}

// restartCounts maps every pod of the release that must keep running to its
// containers' restart count, -1 when it is not Running and Ready.
func (f *karmadaFlow) restartCounts(ctx context.Context) (map[string]int32, error) {
	pods, err := f.n.Kubernetes().CoreV1().Pods(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods in %s: %w", karmadaNamespace, err)
	}
	out := map[string]int32{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.DeletionTimestamp != nil || ownedByJob(p) {
			continue
		}
		if p.Status.Phase != corev1.PodRunning || !podReady(p) {
			out[p.Name] = -1
			continue
		}
		var n int32
		for _, c := range p.Status.ContainerStatuses {
			n += c.RestartCount
		}
		out[p.Name] = n
	}
	return out, nil
}

// ownedByJob: the chart's hook and static-resource Jobs run to completion
// (helm waits for its hooks); only long-running pods are watched.
func ownedByJob(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" {
			return true
		}
	}
	return false
}

// apiserverAuditLog reads the deployed karmada-apiserver's audit log from
// its container's root, seen from the host.
func (f *karmadaFlow) apiserverAuditLog(ctx context.Context) ([]controlplane.AuditEvent, error) {
	pods, err := f.n.Kubernetes().CoreV1().Pods(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, karmadaRelease+"-apiserver-") || p.DeletionTimestamp != nil || len(p.Status.ContainerStatuses) == 0 {
			continue
		}
		id, _ := strings.CutPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		pid, err := containerMainPID("/proc", id)
		if err != nil {
			return nil, err
		}
		return controlplane.ReadAudit(fmt.Sprintf("/proc/%d/root%s", pid, auditLogPath))
	}
	return nil, fmt.Errorf("no %s-apiserver pod", karmadaRelease)
}

// testRotationDropIn is the rotation, CA rotation and drop-in flow through
// the deployed chart: one install (pristine controller-manager), one
// member.
func (f *karmadaFlow) testRotationDropIn(t *testing.T) {
	ctx := t.Context()
	flowStart := time.Now()
	dropin := beginScenario(t, suiteKarmadaNode, "drop-in: upstream's controller-manager image, helm upgrade to holdfast's (defaults), helm rollback: every pod Ready, no restart, /proc status as the chart's securityContext",
		"setup: installed with upstream's karmada-controller-manager image (pristine stand-in, --set controllerManager.image.*), "+
			"`helm upgrade --reset-values` to holdfast's (the chart's defaults, no other value, flag or env), `helm rollback rel 1`; "+
			"each step: the controller-manager pod of the step's image Ready, every pod of the release Running and Ready with no restart over "+dropInWatch.String()+
			", and /proc/<pid>/status of the controller-manager's main process against the chart's securityContext and the image's user. "+
			"Every step with --post-renderer e2e/node/auditrender (karmada-apiserver's audit log), which helm keeps for the rollback")
	red := beginPristineScenario(t, suiteKarmadaNode, "rotation through the deployed chart: member1's token rotated and revoked, member restarted; an update lands on member1 without a restart", "")
	green := beginScenario(t, suiteKarmadaNode, "rotation through the deployed chart: member1's token rotated and revoked, member restarted; an update lands on member1 without a restart", "")
	caRow := beginScenario(t, suiteKarmadaNode, "CA rotation through the deployed chart (overlap): old and new CA in the Secret, member restarted on the new CA; an update lands without a restart", "")
	auditRow := beginScenario(t, suiteKarmadaNode, "karmada-apiserver's audit log over the rotation flow: no request of any chart component answered 403",
		"karmada-apiserver's audit log (Metadata level, every request, e2e/node/auditrender) read from its container's root; window: from the first rotation to after the rollback")
	pristineUID, err := imageUID(f.pristineLayout)
	dropin.Check(err)
	holdfastUID, err := imageUID(f.holdfastLayout)
	dropin.Check(err)

	// Step 1 is the install testKarmada did; its pod is read as the others.
	install := f.helmStep(ctx, dropin, "install-pristine", true, pristineUID, "status", karmadaRelease, "--namespace", karmadaNamespace)
	k, err := f.karmadaKube(ctx)
	dropin.Check(err)
	kd, err := karmadaClient(ctx, f.n)
	dropin.Check(err)
	if _, err := kd.Resource(e2ekcp.PropagationPolicyGVR).Namespace("default").Create(ctx, e2ekcp.PropagationPolicy("default", webPolicy, memberClusterName), metav1.CreateOptions{}); err != nil {
		dropin.Fatalf("creating PropagationPolicy default/%s: %v", webPolicy, err)
	}
	if _, err := k.AppsV1().Deployments("default").Create(ctx, e2ekcp.Deployment("default", webName, webPolicy, 1), metav1.CreateOptions{}); err != nil {
		dropin.Fatalf("creating Deployment default/%s on Karmada: %v", webName, err)
	}
	dropin.Check(f.landed(ctx, 1, landTimeout))

	// Pristine: rotate, restart, update.
	auditFrom := time.Now()
	log0 := len(f.cmLog(ctx, install.pod.Name, false))
	revoked := f.rotate(ctx, red)
	red.MarkAt(e2ereport.EventRotation, revoked)
	red.Timing("rotation-and-restart", time.Since(revoked))
	restarted := time.Now()
	// Two updates: the first can land even on the pristine build, written
	// with the Secret's new token while the member informer, on the old
	// one, still holds the Deployment's current version; the informer
	// never sees that write, so the second is refused with 409 Conflict
	// for good (e2e/karmadacp's two-members shows update 1 landing and
	// update 2 refused). One update made the row depend on whether the
	// member wrote the Deployment in between.
	var refused, sent int32
	for _, replicas := range pristineUpdates {
		red.Check(f.scale(ctx, replicas))
		sent = replicas
		if err = f.landed(ctx, replicas, pristineLandWindow); err != nil {
			refused = replicas
			break
		}
		red.Notef("update to %d replicas landed after the rotation (written with the re-read Secret; the member informer did not see it)", replicas)
	}
	cmLog := f.cmLog(ctx, install.pod.Name, false)
	n401, by := f.member401s(revoked)
	ready, since := f.clusterReady(ctx)
	p, perr := f.cmPod(ctx)
	red.Check(perr)
	switch {
	case err == nil:
		red.Outcome(e2ereport.Pass, "the pristine build landed %d updates after the rotation: the scenario no longer reproduces the bug", len(pristineUpdates))
	case restarts(p) != 0 || p.UID != install.pod.UID:
		red.Errorf("the pristine controller-manager restarted during the window: %s", podSummary(p))
	default:
		evidence := firstMatchIn(cmLog, log0, e2ekcp.UpdateConflict, e2ekcp.MemberWatchUnauthorized, karmada.Unauthorized)
		if evidence == "" {
			red.Errorf("inconclusive: the update did not land within %s, but the controller-manager logged no 409 or 401 since the rotation", pristineLandWindow)
			break
		}
		red.Timing("window", time.Since(restarted))
		if at := f.first401(revoked); !at.IsZero() {
			red.MarkAt(e2ereport.EventFirstFailure, at)
		}
		red.Notef("evidence: %s", evidence)
		red.Notef("member1's audit log: %d requests answered 401 since the revocation, by user agent %s; Cluster Ready=%v (since %s); controller-manager restartCount 0",
			n401, by, ready, since)
		red.Outcome(e2ereport.RedAsExpected, "RED: web's update (replicas %d) did not reach member1 within %s after the rotation, revocation and member restart (%d lines with 401 since the rotation)",
			refused, pristineLandWindow, len(karmada.Lines(cmLog, log0, karmada.Unauthorized)))
	}
	if !ready {
		red.Errorf("Cluster member1 not Ready after the rotation (%s): the scenario wants the short-lived path working", since)
	}

	// Upgrade to holdfast's image with the chart's defaults.
	upgrade := f.helmStep(ctx, dropin, "upgrade-holdfast", false, holdfastUID,
		"upgrade", karmadaRelease, f.chart, "--namespace", karmadaNamespace, "--reset-values", "--wait", "--timeout", "10m", "--post-renderer", f.renderer)
	// A fresh process builds its member clients from the Secret: the
	// update the pristine one could not land (the last one sent) lands now.
	begin := time.Now()
	green.Check(f.landed(ctx, sent, landTimeout))
	green.Timing("upgrade-to-pending-update", time.Since(begin))
	log0 = len(f.cmLog(ctx, upgrade.pod.Name, false))
	revoked = f.rotate(ctx, green)
	green.MarkAt(e2ereport.EventRotation, revoked)
	green.Timing("rotation-and-restart", time.Since(revoked))
	restarted = time.Now()
	green.Check(f.scale(ctx, greenUpdate))
	if err := f.landed(ctx, greenUpdate, landTimeout); err != nil {
		green.Outcome(e2ereport.Fail, "the update did not land after the rotation: %v (evidence: %s)", err,
			firstMatchIn(f.cmLog(ctx, upgrade.pod.Name, false), log0, e2ekcp.UpdateConflict, e2ekcp.MemberWatchUnauthorized, karmada.Unauthorized))
	} else {
		green.Mark(e2ereport.EventRecovery)
		green.Timing("restart-to-landed", time.Since(restarted))
		cmLog = f.cmLog(ctx, upgrade.pod.Name, false)
		picked := karmada.Lines(cmLog, log0, e2ekcp.MemberTokenPickedUp)
		p, err := f.cmPod(ctx)
		green.Check(err)
		n401, by := f.member401s(revoked)
		ready, since := f.clusterReady(ctx)
		switch {
		case p.UID != upgrade.pod.UID || restarts(p) != 0:
			green.Outcome(e2ereport.Fail, "landed, but the controller-manager restarted: %s", podSummary(p))
		case len(picked) == 0:
			green.Outcome(e2ereport.Fail, "landed, but no %q line since the rotation", e2ekcp.MemberTokenPickedUp)
		case !ready:
			green.Outcome(e2ereport.Fail, "landed, but Cluster member1 is not Ready (%s)", since)
		default:
			green.Notef("evidence: %s (%d such lines since the rotation)", picked[0], len(picked))
			green.Notef("member1's audit log: %d requests answered 401 since the revocation, by user agent %s; controller-manager lines with 401 since the rotation: %d",
				n401, by, len(karmada.Lines(cmLog, log0, karmada.Unauthorized)))
			green.Outcome(e2ereport.Pass, "GREEN: web's update (replicas %d) reached member1 after the rotation, revocation and member restart, restartCount 0 (recovered without a restart); Cluster Ready since %s", greenUpdate, since)
		}
	}

	// CA rotation, overlap: old and new CA in the Secret first, then the
	// member restarted on the new CA.
	log0 = len(f.cmLog(ctx, upgrade.pod.Name, false))
	oldCA, newCA := f.member.api.CAData(), f.member.api.NextCAData()
	caRow.Check(f.writeSecret(ctx, "caBundle", slices.Concat(oldCA, newCA)))
	switched := time.Now()
	caRow.Check(f.member.api.RestartWithNextCA(ctx))
	caRow.Mark(e2ereport.EventRotation)
	caRow.Notef("Secret %s/%s holds the old and the new CA, then member1's kube-apiserver restarted serving a certificate of the new CA", memberClusterNamespace, memberClusterName)
	caRow.Timing("member-restart", time.Since(switched))
	restarted = time.Now()
	caRow.Check(f.scale(ctx, caUpdate))
	if err := f.landed(ctx, caUpdate, landTimeout); err != nil {
		caRow.Outcome(e2ereport.Fail, "the update did not land after the CA switch: %v (evidence: %s)", err,
			firstMatchIn(f.cmLog(ctx, upgrade.pod.Name, false), log0, e2ekcp.UnknownAuthority))
	} else {
		caRow.Mark(e2ereport.EventRecovery)
		caRow.Timing("restart-to-landed", time.Since(restarted))
		cmLog = f.cmLog(ctx, upgrade.pod.Name, false)
		p, err := f.cmPod(ctx)
		caRow.Check(err)
		if p.UID != upgrade.pod.UID || restarts(p) != 0 {
			caRow.Outcome(e2ereport.Fail, "landed, but the controller-manager restarted: %s", podSummary(p))
		} else {
			if lines := karmada.Lines(cmLog, log0, e2ekcp.MemberCABundlePickedUp); len(lines) > 0 {
				caRow.Notef("evidence: %s", lines[0])
			}
			caRow.Outcome(e2ereport.Pass, "GREEN: web's update (replicas %d) reached member1 after its CA was renewed (overlap), restartCount 0; x509 errors logged since the Secret update: %d", caUpdate,
				len(karmada.Lines(cmLog, log0, e2ekcp.UnknownAuthority)))
		}
	}

	// Back to upstream's image.
	f.helmStep(ctx, dropin, "rollback-pristine", true, pristineUID,
		"rollback", karmadaRelease, "1", "--namespace", karmadaNamespace, "--wait", "--timeout", "10m")
	dropin.PassWithTest()

	events, err := f.apiserverAuditLog(ctx)
	auditRow.Check(err)
	f.auditVerdict(auditRow, events, auditFrom, time.Now())
	dropin.Timing("flow", time.Since(flowStart))
}

// auditVerdict fails on any request answered 403 in [from, to] and notes
// the 401s and 403s by user.
func (f *karmadaFlow) auditVerdict(sc *e2ereport.Run, events []controlplane.AuditEvent, from, to time.Time) {
	window := controlplane.ReceivedIn(events, from, to)
	if len(window) == 0 {
		sc.Fatalf("karmada-apiserver's audit log has no request between %s and %s (%d events in all)", from.Format(time.RFC3339), to.Format(time.RFC3339), len(events))
	}
	users := map[string]int{}
	codes := map[int]map[string]int{401: {}, 403: {}}
	var forbidden []string
	for _, e := range window {
		u := e.User.Username
		if u == "" {
			u = "(unauthenticated)"
		}
		users[u]++
		if m, ok := codes[e.ResponseStatus.Code]; ok {
			agent, _, _ := strings.Cut(e.UserAgent, " ")
			m[u+" ("+agent+")"]++
		}
		if e.ResponseStatus.Code == 403 {
			forbidden = append(forbidden, e.String())
		}
	}
	sc.Notef("%d requests in the window, by user: %s", len(window), sortedCounts(users))
	sc.Notef("answered 401, by user (user agent): %s; answered 403: %s", sortedCounts(codes[401]), sortedCounts(codes[403]))
	if len(forbidden) > 0 {
		sc.Errorf("%d requests answered 403, first: %s", len(forbidden), forbidden[0])
		return
	}
	sc.PassWithTest()
}

func sortedCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// firstMatchIn is the first line from mark on matching the first pattern
// any line matches, "" if none.
func firstMatchIn(log string, mark int, patterns ...*regexp.Regexp) string {
	for _, re := range patterns {
		if lines := karmada.Lines(log, mark, re); len(lines) > 0 {
			return lines[0]
		}
	}
	return ""
}
