//go:build e2e

package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// testOwnCredential gives holdfast's controller-manager a credential of its
// own on karmada-apiserver, revokes it with a new one written to its
// Secret, and wants the guard's exit, the kubelet's restart and the
// restarted container working with the new credential.
//
// In host mode the chart gives the controller-manager the kubeconfig of
// Secret <release>-kubeconfig: a client certificate in system:masters,
// which cannot be revoked on its own. An operator who wants a revocable
// credential gives it a ServiceAccount token instead: here a
// ServiceAccount on karmada-apiserver bound to cluster-admin (what the
// certificate grants), its token in a kubeconfig in a Secret of its own,
// and the Deployment's kubeconfig volume pointed at that Secret (a patch
// of the Deployment, as `kubectl patch` does; the chart has no value for
// it). The chart mounts the kubeconfig with subPath, so a running
// container never sees the Secret change; a restarted one gets the
// volume as the kubelet last wrote it.
func (f *karmadaFlow) testOwnCredential(t *testing.T) {
	ctx := t.Context()
	sc := beginScenario(t, suiteKarmadaNode, "own credential through the kubelet: the controller-manager's token revoked and a new one in its Secret; the guard exits, the kubelet restarts it, it works again",
		fmt.Sprintf("setup: `helm upgrade --reset-values --set controllerManager.ownCredentialGuard.threshold=%d,controllerManager.ownCredentialGuard.minDuration=%s` (holdfast's image); "+
			"ServiceAccount karmada-system/%s on karmada-apiserver bound to cluster-admin, its token in a kubeconfig (the chart's server and CA) in Secret %s/%s, "+
			"the Deployment's volume kubeconfig-secret patched to that Secret; revocation: the ServiceAccount deleted and recreated, then a new token's kubeconfig written to the Secret",
			ownGuardThreshold, ownGuardMinDuration, ownAccount, karmadaNamespace, ownSecret))
	holdfastUID, err := imageUID(f.holdfastLayout)
	sc.Check(err)
	f.helmStep(ctx, sc, "upgrade-guard-values", false, holdfastUID,
		"upgrade", karmadaRelease, f.chart, "--namespace", karmadaNamespace, "--reset-values", "--wait", "--timeout", "10m", "--post-renderer", f.renderer,
		"--set", fmt.Sprintf("controllerManager.ownCredentialGuard.threshold=%d", ownGuardThreshold),
		"--set", "controllerManager.ownCredentialGuard.minDuration="+ownGuardMinDuration.String())

	accounts, err := f.karmadaAccounts(ctx)
	sc.Check(err)
	host := f.n.Kubernetes()
	// The binding is named after the ServiceAccount, as an operator would
	// name it.
	sc.Check(accounts.BindClusterAdminAs(ctx, ownAccount, karmadaNamespace, ownAccount))
	token, err := accounts.Token(ctx, karmadaNamespace, ownAccount, ownAccountTTL)
	sc.Check(err)
	sc.Check(f.writeOwnKubeconfig(ctx, token))

	// Point the controller-manager at it.
	begin := time.Now()
	old, err := f.cmPod(ctx)
	sc.Check(err)
	d, err := host.AppsV1().Deployments(karmadaNamespace).Get(ctx, cmContainer, metav1.GetOptions{})
	sc.Check(err)
	idx := -1
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "kubeconfig-secret" && v.Secret != nil {
			idx = i
		}
	}
	if idx < 0 {
		sc.Fatalf("Deployment %s/%s has no Secret volume kubeconfig-secret", karmadaNamespace, cmContainer)
	}
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/volumes/%d/secret/secretName", idx), "value": ownSecret}})
	sc.Check(err)
	if _, err := host.AppsV1().Deployments(karmadaNamespace).Patch(ctx, cmContainer, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		sc.Fatalf("patching Deployment %s/%s's kubeconfig volume: %v", karmadaNamespace, cmContainer, err)
	}
	var pod *corev1.Pod
	sc.Check(waitFor(ctx, "the controller-manager pod on its own credential Ready", func() bool {
		p, err := f.cmPod(ctx)
		if err == nil && p.UID != old.UID && podReady(p) {
			pod = p
			return true
		}
		return false
	}))
	sc.Timing("patch-to-ready", time.Since(begin))
	begin = time.Now()
	sc.Check(f.scale(ctx, ownBeforeUpdate))
	sc.Check(f.landed(ctx, ownBeforeUpdate, landTimeout))
	sc.Timing("own-credential-update-landed", time.Since(begin))
	user := "system:serviceaccount:" + karmadaNamespace + ":" + ownAccount
	if n := f.requestsBy(ctx, user, begin, 200); n == 0 {
		sc.Errorf("karmada-apiserver's audit log shows no request of %s answered 200 since the patch: the controller-manager is not on its own credential", user)
	}

	// The container's log up to its exit: once the kubelet has restarted
	// it (and maybe failed a start, see below), "previous" no longer
	// names it.
	followed := f.followLog(ctx, karmadaNamespace, pod.Name, cmContainer)

	// Revoke, then write the new credential.
	revokedAt := time.Now()
	sc.Check(accounts.Revoke(ctx, karmadaNamespace, ownAccount, token))
	sc.Timing("revoke-to-rejected", time.Since(revokedAt))
	newToken, err := accounts.Token(ctx, karmadaNamespace, ownAccount, ownAccountTTL)
	sc.Check(err)
	sc.Check(f.writeOwnKubeconfig(ctx, newToken))
	written := time.Now()
	sc.Notef("own ServiceAccount revoked (its old token rejected %s after the deletion), a new token's kubeconfig written to Secret %s/%s",
		time.Since(revokedAt).Round(100*time.Millisecond), karmadaNamespace, ownSecret)

	// The guard's exit and the kubelet's restart.
	if err := waitWithin(ctx, ownExitBound, "the controller-manager restarted by the kubelet", func() bool {
		p, err := f.cmPod(ctx)
		return err == nil && p.UID == pod.UID && restarts(p) >= 1
	}); err != nil {
		p, _ := f.cmPod(ctx)
		sc.Outcome(e2ereport.Fail, "no restart within %s after the revocation: %s (own 401 lines: %d)", ownExitBound, podSummary(p),
			len(karmada.Lines(f.cmLog(ctx, pod.Name, false), 0, karmada.Unauthorized)))
		return
	}
	sc.Timing("revoke-to-restart-seen", time.Since(revokedAt))
	if line := guardExit(sc, followed); line != "" {
		if at, err := karmada.LineTime(line); err == nil {
			r := revokedAt.UTC()
			midnight := time.Date(r.Year(), r.Month(), r.Day(), 0, 0, 0, 0, time.UTC)
			sc.Timing("revoke-to-guard-exit", midnight.Add(at).Sub(revokedAt))
		}
	}
	// Working again, on the new credential, with no further restart.
	begin = time.Now()
	if err := waitFor(ctx, "the restarted controller-manager Ready", func() bool {
		p, err := f.cmPod(ctx)
		return err == nil && p.UID == pod.UID && podReady(p)
	}); err != nil {
		p, _ := f.cmPod(ctx)
		sc.Outcome(e2ereport.Fail, "the restarted container did not become Ready: %v (%s)", err, podSummary(p))
		return
	}
	sc.Check(f.scale(ctx, ownAfterUpdate))
	landErr := f.landed(ctx, ownAfterUpdate, landTimeout)
	p, err := f.cmPod(ctx)
	sc.Check(err)
	ok200 := f.requestsBy(ctx, user, written, 200)
	switch {
	case landErr != nil:
		sc.Outcome(e2ereport.Fail, "after the kubelet's restart the update did not land: %v; %s", landErr, podSummary(p))
	case ok200 == 0:
		sc.Outcome(e2ereport.Fail, "landed, but no request of %s answered 200 since the new credential was written", user)
	case restarts(p) == 2 && subPathStartError(p):
		// The chart mounts the kubeconfig with subPath. The kubelet rewrote
		// the Secret volume (atomic writer: a new timestamped folder, the
		// old one removed) while it prepared the restart's subPath bind
		// mount of the old file, so runc found no source and the start
		// failed (StartError, exit 128); after CrashLoopBackOff's first
		// 10 s the next start mounted the new file.
		sc.Timing("ready-to-update-landed", time.Since(begin))
		sc.Notef("the kubelet's first restart failed: %s", firstLineOf(p.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message))
		sc.Notef("after the restart: %d requests of %s answered 200 (karmada-apiserver's audit log) since the new credential was written", ok200, user)
		sc.Outcome(e2ereport.Pass, "GREEN: exited through the guard, the kubelet restarted it (restartCount 2: its first start failed on the chart's subPath mount of the Secret the kubelet was rewriting, StartError, the second 10 s later mounted the new kubeconfig), and web's update (replicas %d) reached member1 on the new token", ownAfterUpdate)
		return
	case restarts(p) >= 2 && restarts(p) <= maxGuardRestarts:
		// The kubelet updates a Secret volume on its own sync period, so
		// a restart may still mount the old kubeconfig: the guard exits
		// again and the next restart mounts the new one. What matters is
		// that the kubelet's restarts, not the test, brought it back.
		sc.Timing("ready-to-update-landed", time.Since(begin))
		sc.Notef("after the restarts: %d requests of %s answered 200 (karmada-apiserver's audit log) since the new credential was written; last termination: %s", ok200, user, lastTermination(p))
		sc.Outcome(e2ereport.Pass, "GREEN: exited through the guard, the kubelet restarted it (restartCount %d: a restart before the kubelet had updated the Secret volume exited again), and web's update (replicas %d) reached member1 on the new token", restarts(p), ownAfterUpdate)
		return
	case restarts(p) != 1:
		sc.Outcome(e2ereport.Fail, "landed, but restartCount is %d, want 1 to %d (%s)", restarts(p), maxGuardRestarts, podSummary(p))
	default:
		sc.Timing("ready-to-update-landed", time.Since(begin))
		sc.Notef("after the restart: %d requests of %s answered 200 (karmada-apiserver's audit log) since the new credential was written", ok200, user)
		sc.Outcome(e2ereport.Pass, "GREEN: exited through the guard, the kubelet restarted it (restartCount 1), the restarted container read the new token from the kubelet-updated Secret volume (subPath) and web's update (replicas %d) reached member1", ownAfterUpdate)
	}
}

// followLog follows the log of a container of pod ns/name until it ends
// (the container exited) or ctx is done: once the kubelet has restarted
// it, "previous" may no longer name it. "" if the stream cannot open.
func (f *karmadaFlow) followLog(ctx context.Context, ns, name, container string) <-chan string {
	followed := make(chan string, 1)
	go func() {
		stream, err := f.n.Kubernetes().CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
		if err != nil {
			followed <- ""
			return
		}
		defer stream.Close()
		b, _ := io.ReadAll(stream)
		followed <- string(b)
	}()
	return followed
}

// guardExit wants the own-credential guard's line in a followed log of an
// exited container, not leader election's, and returns it ("" when it
// failed sc).
func guardExit(sc *e2ereport.Run, followed <-chan string) string {
	var exited string
	select {
	case exited = <-followed:
	case <-time.After(30 * time.Second):
		sc.Errorf("the log stream of the exited container did not end within 30 s")
		return ""
	}
	guardLines := karmada.Lines(exited, 0, karmada.OwnCredentialExit)
	leaderLost := karmada.Lines(exited, 0, leaderElectionLost)
	switch {
	case len(guardLines) > 0:
		sc.Notef("evidence (the exited container's log, followed): %s", guardLines[0])
		return guardLines[0]
	case len(leaderLost) > 0:
		sc.Errorf("the container exited through leader election, not the guard: %s", leaderLost[0])
	default:
		sc.Errorf("the exited container's log has neither the guard's line nor leader election's (%d bytes followed)", len(exited))
	}
	return ""
}

// sameUnrestarted fails sc when now is not before's pod or its container
// restarted: a rotation must not need a restart.
func sameUnrestarted(sc *e2ereport.Run, what string, before, now *corev1.Pod) {
	switch {
	case now.UID != before.UID:
		sc.Errorf("the %s pod was replaced (%s -> %s): the rotation must not restart it", what, before.Name, now.Name)
	case restarts(now) != 0:
		sc.Errorf("the %s container restarted %d times", what, restarts(now))
	}
}

// maxGuardRestarts bounds the kubelet's restarts after one revocation: one
// per Secret volume update the restarted container may have missed, not a
// crash loop.
const maxGuardRestarts = 3

// lastTermination describes the pod's last container termination.
func lastTermination(p *corev1.Pod) string {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].LastTerminationState.Terminated == nil {
		return "none recorded"
	}
	t := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	return fmt.Sprintf("%s, exit %d: %s", t.Reason, t.ExitCode, firstLineOf(t.Message))
}

// subPathStartError: the pod's last termination is a failed start on a
// subPath mount.
func subPathStartError(p *corev1.Pod) bool {
	t := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	return t != nil && t.Reason == "StartError" && strings.Contains(t.Message, "volume-subpaths")
}

func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// leaderElectionLost is how a leader that cannot renew ends (client-go's
// leaderelection and controller-runtime's manager).
var leaderElectionLost = regexp.MustCompile(`leaderelection lost|leader election lost`)

// requestsBy counts user's requests answered code since from in
// karmada-apiserver's audit log.
func (f *karmadaFlow) requestsBy(ctx context.Context, user string, from time.Time, code int) int {
	events, err := f.apiserverAuditLog(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range controlplane.ReceivedIn(events, from, time.Now()) {
		if e.User.Username == user && e.ResponseStatus.Code == code {
			n++
		}
	}
	return n
}

// ownAccountTTL outlives the scenario: the token is revoked, never left
// to expire.
const ownAccountTTL = 2 * time.Hour

// karmadaAccounts is ServiceAccounts on karmada-apiserver through the
// chart's admin kubeconfig, a client certificate the revocation leaves
// alone.
func (f *karmadaFlow) karmadaAccounts(ctx context.Context) (*controlplane.ServiceAccounts, error) {
	cfg, err := karmadaConfig(ctx, f.n)
	if err != nil {
		return nil, err
	}
	return controlplane.NewServiceAccounts("karmada-apiserver", cfg)
}

// writeOwnKubeconfig writes the chart's kubeconfig with token in place of
// its client certificate to Secret ownSecret on the node's cluster.
func (f *karmadaFlow) writeOwnKubeconfig(ctx context.Context, token string) error {
	host := f.n.Kubernetes().CoreV1().Secrets(karmadaNamespace)
	chart, err := host.Get(ctx, karmadaRelease+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the chart's kubeconfig Secret: %w", err)
	}
	cfg, err := clientcmd.Load(chart.Data["kubeconfig"])
	if err != nil {
		return fmt.Errorf("secret %s/%s-kubeconfig: %w", karmadaNamespace, karmadaRelease, err)
	}
	for name, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientKey = "", ""
		a.ClientCertificateData, a.ClientKeyData = nil, nil
		a.Token = token
		cfg.AuthInfos[name] = a
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ownSecret, Namespace: karmadaNamespace}, Data: map[string][]byte{"kubeconfig": data}}
	if _, err := host.Create(ctx, s, metav1.CreateOptions{}); err == nil {
		return nil
	} else if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s/%s: %w", karmadaNamespace, ownSecret, err)
	}
	cur, err := host.Get(ctx, ownSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Secret %s/%s: %w", karmadaNamespace, ownSecret, err)
	}
	cur.Data = s.Data
	if _, err := host.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", karmadaNamespace, ownSecret, err)
	}
	return nil
}
