//go:build e2e

package karmadacp

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

const (
	// certRotationCheck and certRotationThreshold are the agent's
	// --cert-rotation-checking-interval (default 5m) and
	// --cert-rotation-remaining-time-threshold (default 0.2): a short
	// threshold, so that the certificate JoinPullCertificate issues (half
	// its life spent) is renewed at the first check, and the renewed one
	// (0.92 left) is not.
	certRotationCheck     = 2 * time.Second
	certRotationThreshold = "0.8"
	// renewTimeout bounds the renewal: a CSR created, approved by
	// karmada-controller-manager, signed by kube-controller-manager, the
	// Secret updated and the volume synced.
	renewTimeout = 90 * time.Second
)

// agentCertStandIns are stated in agent-cert-rotation's notes, after
// agentStandIns (whose token line this scenario replaces).
var agentCertStandIns = []string{
	"stand-in: the agent's first client certificate (CN system:karmada:agent:member1, O system:karmada:agents, bound to cluster-admin) is issued by a CA of the harness that karmada-apiserver trusts beside kube-controller-manager's signer CA (--client-ca-file holds both); karmadactl register gets it through a bootstrap token's CSR instead. Valid 61 min with 30 spent, so that certRotation renews it at its first check",
	"stand-in: the old certificate is revoked by removing its CA from karmada-apiserver's --client-ca-file (kube-apiserver reloads the file on change): Kubernetes has no revocation list for client certificates, and waiting for the old one to expire would take 31 minutes",
	"stand-in: the kubelet is a goroutine of the suite that copies Secret karmada-system/karmada-kubeconfig on member1 into the agent's volume (..data swapped) within 250 ms of a change, where the kubelet takes up to its sync period (1 min) plus its cache TTL",
	"real: karmada-agent's certRotation controller (--controllers=*,certRotation) creates the CSR on karmada-apiserver, karmada-controller-manager's agentcsrapproving controller approves it after a SubjectAccessReview, kube-controller-manager's csrsigning controller (--controllers=csrsigning, signer kubernetes.io/kube-apiserver-client) signs it, and certRotation writes the new kubeconfig into the member's Secret",
}

// agentCertPickedUp is the patched agent's line when it follows a renewed
// client certificate in its kubeconfig.
var agentCertPickedUp = regexp.MustCompile(`Picked up a rotated client certificate from the kubeconfig`)

// testAgentCertRotation: member1 joined in Pull mode by an agent that
// authenticates with a client certificate near the end of its life (see
// agentCertStandIns) and runs its own certRotation controller with a short
// threshold. The agent renews its certificate itself: a CSR, approved by
// karmada-controller-manager, signed by kube-controller-manager, the new
// kubeconfig written into its Secret on member1, which reaches the agent's
// volume. Then the old certificate is revoked (its CA removed from
// karmada-apiserver's --client-ca-file), karmada-apiserver is restarted
// (every watch reconnects, as in agent-rotation) and Karmada's Deployment
// updated. Patched: the agent uses the renewed certificate from its
// volume and applies the update, same process. Pristine: it keeps the
// certificate it read at start, though its own controller renewed it;
// every request is refused (401), the update never lands and the lease
// goes stale while the process runs (RED).
func testAgentCertRotation(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b, withCSRSigning())
	// standIns' "left out" line says no kube-controller-manager runs on
	// karmada-apiserver: here its csrsigning controller does.
	notes := slices.Concat(slices.DeleteFunc(slices.Clone(standIns), func(n string) bool { return strings.HasPrefix(n, "left out: kube-controller-manager") }),
		[]string{"left out: kube-controller-manager's controllers on karmada-apiserver but csrsigning, scheduler estimator, descheduler; default feature gates"},
		agentStandIns[:1], agentCertStandIns)
	s := begin(t, "agent-cert-rotation", string(b), notes...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	begun := time.Now()
	pm := e.joinPullWith(ctx, s, e.cp.JoinPullCertificate,
		"--controllers=*,certRotation",
		"--cert-rotation-checking-interval="+certRotationCheck.String(),
		"--cert-rotation-remaining-time-threshold="+certRotationThreshold)
	agent := pm.Agent()
	pid := agent.Pid()
	e.propagateToPull(ctx, s)

	// The agent's own controller renews the certificate.
	mark := len(agent.Log())
	var renewed karmadacp.AgentCertificate
	if err := wait.PollUntilContextTimeout(ctx, poll, renewTimeout, true, func(ctx context.Context) (bool, error) {
		c, err := pm.SecretCertificate(ctx)
		if err != nil {
			return false, nil
		}
		renewed = c
		return c.Renewed, nil
	}); err != nil {
		s.Fatalf("certRotation did not renew the certificate in Secret %s/%s on %s within %s (it holds one of %s, valid to %s): %v",
			karmadacp.SystemNamespace, karmadacp.AgentKubeconfigSecret, memberName, renewTimeout, renewed.Issuer, renewed.NotAfter.Format(time.RFC3339), err)
	}
	inSecret := time.Now()
	s.Timing("join-to-renewed-in-secret", inSecret.Sub(begun))
	var synced karmadacp.SecretSync
	if err := wait.PollUntilContextTimeout(ctx, poll, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		syncs, _ := pm.SecretSyncs()
		if len(syncs) == 0 {
			return false, nil
		}
		synced = syncs[len(syncs)-1]
		return true, nil
	}); err != nil {
		_, serr := pm.SecretSyncs()
		s.Fatalf("the kubelet stand-in did not publish the renewed Secret into the volume: %v (last error: %v)", err, serr)
	}
	s.Notef("renewed by the agent's certRotation: Secret %s/%s on %s holds a certificate for %s issued by %s, valid %s to %s; in the volume at %s",
		karmadacp.SystemNamespace, karmadacp.AgentKubeconfigSecret, memberName, renewed.Subject, renewed.Issuer,
		renewed.NotBefore.Format(time.RFC3339), renewed.NotAfter.Format(time.RFC3339), synced.At.Format("15:04:05.000"))
	if csrs, err := e.cp.API.Kubernetes().CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{}); err == nil {
		for _, csr := range csrs.Items {
			for _, c := range csr.Status.Conditions {
				if c.Type == "Approved" {
					s.Notef("CSR %s (signer %s, user %s): approved (%s: %s), certificate issued: %t", csr.Name, csr.Spec.SignerName, csr.Spec.Username, c.Reason, c.Message, len(csr.Status.Certificate) > 0)
				}
			}
		}
	}

	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	refused := firstSeen(watchCtx, agent, mark, agentUnauthorized)
	if err := pm.WithdrawFirstCertificate(ctx); err != nil {
		s.Fatalf("%v", err)
	}
	revoked := time.Now()
	s.Mark(e2ereport.EventRotation)
	s.Notef("revoked: the first certificate's CA removed from karmada-apiserver's --client-ca-file; a request with it gets 401 (%.1f s after the renewed Secret reached the volume)", revoked.Sub(synced.At).Seconds())

	leaseAtRestart, restarted, updated := e.restartThenUpdate(ctx, s, pm)

	if b == karmadacp.Patched {
		agentRotationPatched(ctx, s, e, pm, pid, revoked, agentCertPickedUp, mark, leaseAtRestart, restarted, updated)
	} else {
		agentRotationPristine(ctx, s, e, pm, refused, mark, leaseAtRestart, updated)
	}
}
