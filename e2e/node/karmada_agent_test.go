//go:build e2e

package node

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

const (
	// agentRelease and agentNamespace are the agent's helm release
	// (installMode agent), beside the host release; the chart names the
	// agent's Deployment, ServiceAccount and kubeconfig Secret after it.
	agentRelease   = "pull"
	agentNamespace = "karmada-pull"
	// pullClusterName is the node's own cluster as a Pull member.
	pullClusterName = "node-self"
	// agentFirstCertLife is how long the agent's first certificate is
	// valid from its issue: longer than the install, the first propagation,
	// the helm upgrade and the kubelet's update of the volume (its pod
	// resync is a minute plus jitter), short enough to wait for.
	agentFirstCertLife = 3 * time.Minute
	// pulledConfigMap is what the flow propagates to the Pull member.
	pulledConfigMap = "pulled"
)

// agentPickedUpCert is the patched agent's line when it takes a rotated
// client certificate from its kubeconfig.
var agentPickedUpCert = regexp.MustCompile(`Picked up a rotated client certificate from the kubeconfig`)

// testAgent installs the chart a second time, in agent mode (holdfast's
// karmada-agent image), with the node's own cluster as Pull member
// node-self and a client certificate of the host release's CA whose
// validity ends agentFirstCertLife after its issue. A ConfigMap
// propagated to node-self lands on the node. The certificate is rotated
// the way a chart user rotates it: helm upgrade with a new one, which
// changes the kubeconfig Secret only (the chart mounts it as a directory);
// the kubelet updates the volume and the agent takes it. Once the first
// certificate has expired, an update of the ConfigMap on Karmada must land
// with no restart of the agent. (The chart's Secret is <release>-kubeconfig
// with key kubeconfig and the chart passes no --controllers, so karmada-
// agent's own certRotation cannot run from it; e2e/karmadacp's
// agent-cert-rotation covers that path.)
func (f *karmadaFlow) testAgent(t *testing.T, agentImage string) {
	ctx := t.Context()
	sc := beginScenario(t, suiteKarmadaNode, "karmada-agent through the packaged chart (agent mode, the node's own cluster a Pull member): its client certificate rotated by helm upgrade, the old one expired; an update still lands, no restart",
		fmt.Sprintf("setup: `helm install %s` (namespace %s) with installMode=agent, agent.clusterName=%s, agent.kubeconfig = karmada-apiserver's Service address and CA and a client certificate "+
			"(CN system:karmada:agent:%s, O system:karmada:agents, bound to cluster-admin on karmada-apiserver) issued with the host release's server-ca, valid %s; the agent's member is the node's cluster (its in-cluster ServiceAccount); "+
			"namespace %s created on karmada-apiserver too (the chart's leader election runs there); rotation: `helm upgrade --reuse-values` with a certificate valid an hour", agentRelease, agentNamespace, pullClusterName, pullClusterName, agentFirstCertLife, agentNamespace))
	host := f.n.Kubernetes()
	certSecret, err := host.CoreV1().Secrets(karmadaNamespace).Get(ctx, karmadaRelease+"-cert", metav1.GetOptions{})
	sc.Check(err)
	ca, err := testpki.LoadAuthority(certSecret.Data["server-ca.crt"], certSecret.Data["server-ca.key"])
	sc.Check(err)
	user := "system:karmada:agent:" + pullClusterName
	issueFor := func(row *e2ereport.Run) func(time.Time) ([]byte, []byte) {
		return func(notAfter time.Time) ([]byte, []byte) {
			now := time.Now()
			cert, key, err := ca.Issue(testpki.Leaf{CommonName: user, Organization: []string{"system:karmada:agents"}, Usage: x509.ExtKeyUsageClientAuth,
				NotBefore: now.Add(-time.Minute), NotAfter: notAfter}, now)
			row.Check(err)
			return cert, key
		}
	}
	issue := issueFor(sc)
	kube, err := f.karmadaKube(ctx)
	sc.Check(err)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "holdfast-e2e-agent-" + pullClusterName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		sc.Fatalf("binding %s on karmada-apiserver: %v", user, err)
	}
	// The chart runs the agent's leader election in its release namespace
	// on karmada-apiserver (--leader-elect-resource-namespace), as
	// karmadactl register does in karmada-system, which exists there.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		sc.Fatalf("creating namespace %s on karmada-apiserver: %v", agentNamespace, err)
	}
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		sc.Check(os.WriteFile(p, data, 0o600))
		return p
	}
	firstExpires := time.Now().Add(agentFirstCertLife).Truncate(time.Second)
	cert1, key1 := issue(firstExpires)
	begin := time.Now()
	out, err := f.n.Helm(ctx, "install", agentRelease, f.chart, "--namespace", agentNamespace, "--create-namespace", "--wait", "--timeout", "5m",
		"--set", "installMode=agent",
		"--set", "agent.clusterName="+pullClusterName,
		"--set", "agent.kubeconfig.server=https://"+karmadaRelease+"-apiserver."+karmadaNamespace+".svc.cluster.local:5443",
		"--set-file", "agent.kubeconfig.caCrt="+file("server-ca.crt", certSecret.Data["server-ca.crt"]),
		"--set-file", "agent.kubeconfig.crt="+file("agent-1.crt", cert1),
		"--set-file", "agent.kubeconfig.key="+file("agent-1.key", key1))
	if err != nil {
		sc.Fatalf("helm install (agent mode): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = f.n.Helm(context.Background(), "uninstall", agentRelease, "--namespace", agentNamespace, "--wait", "--timeout", "2m")
	})
	sc.Timing("helm-install-agent", time.Since(begin))
	pod, err := f.agentPod(ctx)
	sc.Check(err)
	if img := pod.Spec.Containers[0].Image; img != agentImage {
		sc.Errorf("the agent runs image %s, want holdfast's %s", img, agentImage)
	}
	k, err := karmadaClient(ctx, f.n)
	sc.Check(err)
	ready := waitFor(ctx, "Cluster "+pullClusterName+" (Pull) Ready", func() bool {
		c, err := k.Resource(karmadaClusters).Get(ctx, pullClusterName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		mode, _, _ := unstructured.NestedString(c.Object, "spec", "syncMode")
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				return mode == "Pull"
			}
		}
		return false
	})
	if ready != nil {
		sc.Fatalf("%v; %s", ready, f.volumeDiagnosis(ctx, agentNamespace, pod, agentRelease+"-kubeconfig", "kubeconfig", "/etc/kubeconfig/kubeconfig"))
	}
	sc.Timing("install-to-cluster-ready", time.Since(begin))

	// A ConfigMap propagated to node-self: the agent applies it on the node.
	begin = time.Now()
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": pulledConfigMap, "namespace": "default"}, "data": map[string]any{"seq": "1"}},
	} {
		_, err := k.Resource(configMaps).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		sc.Check(err)
	}
	_, err = k.Resource(karmadaPolicies).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": pulledConfigMap, "namespace": "default"},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": pulledConfigMap}},
			"placement":         map[string]any{"clusterAffinity": map[string]any{"clusterNames": []any{pullClusterName}}}}}}, metav1.CreateOptions{})
	sc.Check(err)
	pulled := func(seq string) func() bool {
		return func() bool {
			cm, err := host.CoreV1().ConfigMaps("default").Get(ctx, pulledConfigMap, metav1.GetOptions{})
			return err == nil && cm.Data["seq"] == seq
		}
	}
	sc.Check(waitFor(ctx, "ConfigMap default/"+pulledConfigMap+" applied on the node by the agent", pulled("1")))
	sc.Timing("policy-to-applied", time.Since(begin))

	// The rotation as a chart user makes it.
	logMark := len(f.podLogIn(ctx, agentNamespace, pod.Name))
	cert2, key2 := issue(time.Now().Add(time.Hour))
	begin = time.Now()
	out, err = f.n.Helm(ctx, "upgrade", agentRelease, f.chart, "--namespace", agentNamespace, "--reuse-values", "--wait", "--timeout", "5m",
		"--set-file", "agent.kubeconfig.crt="+file("agent-2.crt", cert2),
		"--set-file", "agent.kubeconfig.key="+file("agent-2.key", key2))
	if err != nil {
		sc.Fatalf("helm upgrade with the new certificate: %v\n%s", err, out)
	}
	upgraded := time.Now()
	sc.Timing("helm-upgrade-certificate", upgraded.Sub(begin))
	var picked string
	if err := waitWithin(ctx, estimatorFollowBound, "the agent to pick up the new certificate from its volume", func() bool {
		log := f.podLogIn(ctx, agentNamespace, pod.Name)
		if logMark <= len(log) {
			picked = lineAt(log, logMark, agentPickedUpCert)
		}
		return picked != ""
	}); err != nil {
		sc.Fatalf("%v; %s", err, f.volumeDiagnosis(ctx, agentNamespace, pod, agentRelease+"-kubeconfig", "kubeconfig", "/etc/kubeconfig/kubeconfig"))
	}
	sc.Timing("helm-upgrade-to-picked-up", time.Since(upgraded))
	sc.Notef("evidence (the kubelet updated the directory mount; the agent took it): %s", picked)
	if wait := time.Until(firstExpires); wait > 0 {
		sc.Notef("picked up %.0f s before the first certificate expired; waiting for its expiry", wait.Seconds())
		select {
		case <-ctx.Done():
			sc.Fatalf("%v", ctx.Err())
		case <-time.After(wait + 2*time.Second):
		}
	} else {
		sc.Notef("the first certificate had expired %.0f s before the agent took the new one", -wait.Seconds())
	}
	// An update after the first certificate expired.
	begin = time.Now()
	cm, err := k.Resource(configMaps).Namespace("default").Get(ctx, pulledConfigMap, metav1.GetOptions{})
	sc.Check(err)
	sc.Check(unstructured.SetNestedField(cm.Object, "2", "data", "seq"))
	_, err = k.Resource(configMaps).Namespace("default").Update(ctx, cm, metav1.UpdateOptions{})
	sc.Check(err)
	if err := waitWithin(ctx, 2*time.Minute, "the update applied on the node by the agent", pulled("2")); err != nil {
		sc.Fatalf("%v", err)
	}
	sc.Timing("update-after-expiry-to-applied", time.Since(begin))
	now, err := f.agentPod(ctx)
	sc.Check(err)
	sameUnrestarted(sc, "agent", pod, now)
	n401 := strings.Count(f.podLogIn(ctx, agentNamespace, pod.Name)[logMark:], "Unauthorized")
	sc.Notef("after the first certificate expired (%s): the update landed on the node; pod %s the same, restartCount %d; %d Unauthorized in its log since the upgrade",
		firstExpires.Format(time.RFC3339), pod.Name, restarts(now), n401)
	sc.PassWithTest()
	if t.Failed() {
		return
	}
	f.testAgentOwnCredential(t, issueFor, pulled)
}

// testAgentOwnCredential lets the agent's certificate expire with none
// renewed: a credential rejected for good. The agent must not stay
// Running, Ready and idle: its guard exits, the kubelet restarts it, and
// once a new certificate reaches the volume it applies Work again in the
// same pod. The chart has no value for the agent's guard; its flags are
// added to the Deployment by a JSON patch, as `kubectl patch` does, with
// the values of the controller-manager's row, so that the guard acts
// before leader election's renew deadline would end the process (the
// chart runs the agent with leader election; with it off, the guard is
// all there is).
func (f *karmadaFlow) testAgentOwnCredential(t *testing.T, issueFor func(*e2ereport.Run) func(time.Time) ([]byte, []byte), pulled func(string) func() bool) {
	ctx := t.Context()
	sc := beginScenario(t, suiteKarmadaNode, "karmada-agent's credential rejected for good (its certificate expired, none renewed): the guard exits, the kubelet restarts it; a new certificate in its Secret, it applies Work again in the same pod",
		fmt.Sprintf("setup: the agent release of the previous row; Deployment %s/%s patched (JSON patch) with --own-credential-guard-threshold=%d --own-credential-guard-min-duration=%s; "+
			"Secret %s/%s-kubeconfig rewritten with a certificate of the same subject valid %s from its issue (the new pod mounts it at start), and once that expired with none renewed, with one valid an hour",
			agentNamespace, agentRelease, ownGuardThreshold, ownGuardMinDuration, agentNamespace, agentRelease, agentRejectedCertLife))
	issue := issueFor(sc)
	host := f.n.Kubernetes()
	k, err := karmadaClient(ctx, f.n)
	sc.Check(err)
	old, err := f.agentPod(ctx)
	sc.Check(err)

	// A certificate about to expire, then the guard's flags: the new pod
	// mounts the Secret as it is when it starts.
	expires := time.Now().Add(agentRejectedCertLife).Truncate(time.Second)
	cert, key := issue(expires)
	sc.Check(f.writeAgentKubeconfig(ctx, cert, key))
	patch, err := json.Marshal([]map[string]any{
		{"op": "add", "path": "/spec/template/spec/containers/0/command/-", "value": fmt.Sprintf("--own-credential-guard-threshold=%d", ownGuardThreshold)},
		{"op": "add", "path": "/spec/template/spec/containers/0/command/-", "value": "--own-credential-guard-min-duration=" + ownGuardMinDuration.String()},
	})
	sc.Check(err)
	begin := time.Now()
	if _, err := host.AppsV1().Deployments(agentNamespace).Patch(ctx, agentRelease, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		sc.Fatalf("patching Deployment %s/%s with the guard's flags: %v", agentNamespace, agentRelease, err)
	}
	var pod *corev1.Pod
	sc.Check(waitFor(ctx, "the patched agent pod Ready", func() bool {
		p, err := f.agentPod(ctx)
		if err == nil && p.UID != old.UID && podReady(p) {
			pod = p
			return true
		}
		return false
	}))
	sc.Timing("patch-to-ready", time.Since(begin))
	// Working on the short-lived certificate first.
	sc.Check(f.updatePulled(ctx, k, "3"))
	if err := waitWithin(ctx, time.Until(expires), "the update applied by the new pod before its certificate expires", pulled("3")); err != nil {
		sc.Fatalf("%v (the certificate expires %s; raise agentRejectedCertLife if the pod started too slowly)", err, expires.Format(time.RFC3339))
	}
	sc.Timing("patch-to-applied", time.Since(begin))

	// The container's log up to its exit (see testOwnCredential).
	followed := f.followLog(ctx, agentNamespace, pod.Name, "")
	// The pod as it is, Ready or not (agentPod waits for a Ready one): a
	// restarted container that meets the expired certificate exits at its
	// start, so the pod is seldom Ready until the new one arrives.
	current := func() (*corev1.Pod, error) {
		return host.CoreV1().Pods(agentNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
	}
	if err := waitWithin(ctx, time.Until(expires)+ownExitBound, "the agent restarted by the kubelet after its certificate expired", func() bool {
		p, err := current()
		return err == nil && restarts(p) >= 1
	}); err != nil {
		p, _ := current()
		sc.Fatalf("%v: %s", err, podSummary(p))
	}
	sc.Timing("expiry-to-restart-seen", time.Since(expires))
	guardExit(sc, followed)
	p, err := current()
	sc.Check(err)
	sc.Notef("the certificate expired at %s; the kubelet restarted the container %.0f s later (%s)", expires.Format(time.RFC3339), time.Since(expires).Seconds(), lastTermination(p))

	// A new certificate: the kubelet updates the volume on its next sync
	// of the pod; the restarted container, or the next restart after a
	// further exit, takes it.
	cert, key = issue(time.Now().Add(time.Hour))
	sc.Check(f.writeAgentKubeconfig(ctx, cert, key))
	written := time.Now()
	sc.Check(f.updatePulled(ctx, k, "4"))
	if err := waitWithin(ctx, estimatorFollowBound+time.Minute, "the update applied after a new certificate was written", pulled("4")); err != nil {
		p, _ := current()
		sc.Fatalf("%v; %s; %s", err, podSummary(p), f.volumeDiagnosis(ctx, agentNamespace, pod, agentRelease+"-kubeconfig", "kubeconfig", "/etc/kubeconfig/kubeconfig"))
	}
	sc.Timing("new-certificate-to-applied", time.Since(written))
	p, err = current()
	if apierrors.IsNotFound(err) {
		sc.Fatalf("the agent pod %s is gone: the kubelet's restarts, not a new pod, must bring it back", pod.Name)
	}
	sc.Check(err)
	switch {
	case restarts(p) > maxAgentGuardRestarts:
		sc.Errorf("restartCount %d after the new certificate, want at most %d (%s)", restarts(p), maxAgentGuardRestarts, podSummary(p))
	}
	sc.Notef("a new certificate written to the Secret: the update applied %.0f s later by pod %s (the same), restartCount %d (a restart before the kubelet updated the volume met the expired certificate and exited again at its start)",
		time.Since(written).Seconds(), p.Name, restarts(p))
	sc.PassWithTest()
}

const (
	// agentRejectedCertLife is how long the short-lived certificate is
	// valid from its issue: the patched pod's start, its leader election
	// (the old pod's lease expires first) and one update applied.
	agentRejectedCertLife = 75 * time.Second
	// maxAgentGuardRestarts bounds the kubelet's restarts until the new
	// certificate reaches the volume: a restarted agent that meets the
	// expired certificate exits at its start ("command failed"
	// Unauthorized), CrashLoopBackOff waits 10, 20, 40, 80 s between
	// them, and the kubelet's pod sync that updates the volume comes
	// within about a minute and a half.
	maxAgentGuardRestarts = 5
)

// updatePulled sets the propagated ConfigMap's seq on Karmada.
func (f *karmadaFlow) updatePulled(ctx context.Context, k dynamic.Interface, seq string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := k.Resource(configMaps).Namespace("default").Get(ctx, pulledConfigMap, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cm.Object, seq, "data", "seq"); err != nil {
			return err
		}
		_, err = k.Resource(configMaps).Namespace("default").Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
}

// writeAgentKubeconfig puts cert and key in the agent's kubeconfig Secret
// (the chart's, key kubeconfig).
func (f *karmadaFlow) writeAgentKubeconfig(ctx context.Context, cert, key []byte) error {
	return f.editKubeconfigSecret(ctx, agentNamespace, agentRelease+"-kubeconfig", "kubeconfig", func(cfg *clientcmdapi.Config) {
		for _, a := range cfg.AuthInfos {
			a.ClientCertificate, a.ClientKey = "", ""
			a.ClientCertificateData, a.ClientKeyData = cert, key
		}
	})
}

// agentPod is the one live, Ready agent pod.
func (f *karmadaFlow) agentPod(ctx context.Context) (*corev1.Pod, error) {
	return f.onePod(ctx, agentNamespace, agentRelease, "")
}
