//go:build e2e

package node

import (
	"context"
	"fmt"
	"github.com/holdfast-dist/holdfast/internal/harness/hubcrds"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/node"
	"github.com/holdfast-dist/holdfast/pkg/hubfollow/hubfollowtest"
)

// Names as a KubeSlice installation has them (see e2e/worker).
const (
	clusterName      = "worker-1"
	projectNamespace = "kubeslice-acme"
	// workerNamespace is where the chart installs: v1.6.4 hard-codes it,
	// which is also why the two installs run one after the other.
	workerNamespace = "kubeslice-system"
	// hubSA is the identity each hub minted the worker's token for.
	hubSA       = "kubeslice-worker"
	hubTokenTTL = 2 * time.Hour
	// quietRun is issue 27's bar: the worker crash-looped every ~2 min 20 s
	// on missing RBAC while its readiness stayed green.
	quietRun = 5 * time.Minute
)

var clusterResource = schema.GroupVersionResource{Group: "controller.kubeslice.io", Version: "v1alpha1", Resource: "clusters"}

// workerHub is a hub cluster listening on the node's host address, so the
// worker's pod reaches it over the veth.
type workerHub struct {
	name     string
	cp       *controlplane.Cluster
	auditLog string
	token    string
}

func startWorkerHub(t *testing.T, n *node.Node, name string, crds []byte) *workerHub {
	t.Helper()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &workerHub{name: name, auditLog: filepath.Join(dir, "audit.log")}
	audit, err := controlplane.AuditFlags(dir, h.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	h.cp = controlplane.StartForTest(t, controlplane.Options{Name: name, Dir: filepath.Join(dir, "cp"), Address: n.HostIP(), ExtraAPIServerFlags: audit})
	if err := h.cp.ApplyYAML(ctx, crds); err != nil {
		t.Fatalf("hub %s: installing the KubeSlice CRDs: %v", name, err)
	}
	// kubernetesDashboard.enabled spares the worker copying a dashboard
	// Secret nothing here creates (see e2e/worker).
	cluster := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: controller.kubeslice.io/v1alpha1
kind: Cluster
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  clusterProperty:
    monitoring:
      kubernetesDashboard: {enabled: true}
`, projectNamespace, clusterName)
	if err := h.cp.ApplyYAML(ctx, []byte(cluster)); err != nil {
		t.Fatalf("hub %s: creating the worker's Cluster: %v", name, err)
	}
	// The hub side's RBAC is the KubeSlice controller's business, not the
	// chart's: cluster-admin stands in for it.
	if err := h.cp.BindClusterAdmin(ctx, projectNamespace, hubSA); err != nil {
		t.Fatal(err)
	}
	if h.token, err = h.cp.ServiceAccountToken(ctx, projectNamespace, hubSA, hubTokenTTL); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *workerHub) cluster(ctx context.Context) (*unstructured.Unstructured, error) {
	return h.cp.Dynamic().Resource(clusterResource).Namespace(projectNamespace).Get(ctx, clusterName, metav1.GetOptions{})
}

// registered reports whether a worker connected to h marked its Cluster
// Registered there (only the hub the worker is connected to is written).
func (h *workerHub) registered(ctx context.Context) bool {
	obj, err := h.cluster(ctx)
	if err != nil {
		return false
	}
	s, _, _ := unstructured.NestedString(obj.Object, "status", "registrationStatus")
	return s == "Registered"
}

// resetStatus empties the Cluster's status, so a later registration shows.
func (h *workerHub) resetStatus(ctx context.Context) error {
	return h.updateStatus(ctx, func(obj *unstructured.Unstructured) { delete(obj.Object, "status") })
}

func (h *workerHub) publish(ctx context.Context, c hubfollowtest.Claim) error {
	return h.updateStatus(ctx, func(obj *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(obj.Object, c.StatusField(), "status", "activeController")
	})
}

func (h *workerHub) updateStatus(ctx context.Context, change func(*unstructured.Unstructured)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := h.cluster(ctx)
		if err != nil {
			return err
		}
		change(obj)
		_, err = h.cp.Dynamic().Resource(clusterResource).Namespace(projectNamespace).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
}

func (h *workerHub) claim() hubfollowtest.Claim {
	return hubfollowtest.Claim{Identity: h.name, Endpoint: h.cp.Endpoint(), CABundle: h.cp.CAData(), LastUpdated: time.Now()}
}

// workerWritesSince counts the writes (not the follower's reads) the
// worker's hub identity sent h since t, from h's audit log.
func (h *workerHub) workerWritesSince(since time.Time) (int, error) {
	events, err := controlplane.ReadAudit(h.auditLog)
	if err != nil {
		return 0, err
	}
	user := "system:serviceaccount:" + projectNamespace + ":" + hubSA
	count := 0
	for _, e := range events {
		if e.User.Username == user && e.RequestReceived.After(since) && (e.Verb == "update" || e.Verb == "patch" || e.Verb == "create") {
			count++
		}
	}
	return count, nil
}

// workerInputs finds the worker's image layout and chart, as `make
// e2e-node-inputs` (holdfast images build, charts build) leaves them.
func workerInputs(root string) (layout, chart string, err error) {
	layouts, _ := filepath.Glob(filepath.Join(root, "_output", "images", "workeroperator-*", "worker-operator", "index.json"))
	charts, _ := filepath.Glob(filepath.Join(root, "_output", "charts", "worker-operator-*.tgz"))
	if len(layouts) != 1 || len(charts) != 1 {
		return "", "", fmt.Errorf("want one worker image layout and one chart under _output (make e2e-node-inputs), found %v and %v", layouts, charts)
	}
	return filepath.Dir(layouts[0]), charts[0], nil
}

func testWorker(t *testing.T, root string, n *node.Node, standIns *standInBuild) {
	ctx := t.Context()
	layout, chart, err := workerInputs(root)
	if err != nil {
		t.Fatal(err)
	}
	img, err := n.ImportLayout(ctx, layout)
	if err != nil {
		t.Fatal(err)
	}
	apisDir, err := hubcrds.ModuleDir(ctx, hubcrds.APIsModule, hubcrds.APIsVersion)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := hubcrds.ReadCRDs(filepath.Join(apisDir, "crd"))
	if err != nil {
		t.Fatal(err)
	}
	hubA := startWorkerHub(t, n, "hub-a", crds)
	hubB := startWorkerHub(t, n, "hub-b", crds)
	kube := n.Kubernetes()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workerNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for secret, h := range map[string]*workerHub{"hub-primary-token": hubA, "hub-secondary-token": hubB} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: workerNamespace},
			Data:       map[string][]byte{"token": []byte(h.token), "ca.crt": h.cp.CAData()},
		}
		if _, err := kube.CoreV1().Secrets(workerNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	note := fmt.Sprintf("setup: image %s imported from its OCI layout (both platforms' index; the node runs amd64) and tagged %s; chart %s; "+
		"hubs are etcd + kube-apiserver on the node's host address %s with kubeslice/apis %s CRDs (Cluster status extended with activeController) "+
		"and cluster-admin for the worker's hub identity; the worker's own cluster is the node's, with the chart's RBAC",
		img.Name, img.ByDigest(), filepath.Base(chart), n.HostIP(), hubcrds.APIsVersion)

	common := []string{
		"--namespace", workerNamespace, "--wait", "--timeout", "5m",
		"--set", "clusterName=" + clusterName,
		"--set", "hub.projectNamespace=" + projectNamespace,
		"--set", "hub.primary.endpoint=" + hubA.cp.Endpoint(),
		"--set", "hub.primary.secretName=hub-primary-token",
	}
	t.Run("two-hubs", func(t *testing.T) {
		testWorkerFailover(t, n, chart, note, common, hubA, hubB)
	})
	for _, h := range []*workerHub{hubA, hubB} {
		if err := h.resetStatus(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("secondary-unset", func(t *testing.T) {
		testWorkerQuiet(t, n, chart, note, common, hubA)
	})
	t.Run("drop-in", func(t *testing.T) {
		testWorkerDropIn(t, standIns, n, chart, common, img, layout)
	})
}

// workerPod is the chart's one worker pod.
func workerPod(ctx context.Context, n *node.Node) (*corev1.Pod, error) {
	pods, err := n.Kubernetes().CoreV1().Pods(workerNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	if len(live) != 1 {
		return nil, fmt.Errorf("%d worker pods in %s, want 1", len(live), workerNamespace)
	}
	return &live[0], nil
}

func restarts(p *corev1.Pod) int32 {
	if len(p.Status.ContainerStatuses) == 0 {
		return -1
	}
	return p.Status.ContainerStatuses[0].RestartCount
}

func waitFor(ctx context.Context, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil
}

func uninstall(t *testing.T, n *node.Node) {
	if out, err := n.Helm(context.Background(), "uninstall", "worker", "--namespace", workerNamespace, "--wait"); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	if err := waitFor(context.Background(), "the worker pod gone", func() bool {
		pods, err := n.Kubernetes().CoreV1().Pods(workerNamespace).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	}); err != nil {
		t.Error(err)
	}
}

func testWorkerFailover(t *testing.T, n *node.Node, chart, note string, common []string, hubA, hubB *workerHub) {
	sc := beginScenario(t, suiteWorkerNode, "helm install, two hubs: Ready; promote hub-b: exit, the kubelet restarts it, it talks to hub-b", note)
	ctx := t.Context()
	for _, h := range []*workerHub{hubB, hubA} {
		sc.Check(h.publish(ctx, hubA.claim()))
	}
	begin := time.Now()
	args := append([]string{"install", "worker", chart}, common...)
	args = append(args, "--set", "hub.secondary.endpoint="+hubB.cp.Endpoint(), "--set", "hub.secondary.secretName=hub-secondary-token")
	if out, err := n.Helm(ctx, args...); err != nil {
		sc.Fatalf("%v\n%s", err, out)
	}
	defer uninstall(t, n)
	sc.Timing("helm-install-wait", time.Since(begin))
	sc.Check(waitFor(ctx, "the worker registered on hub-a", func() bool { return hubA.registered(ctx) }))
	sc.Timing("install-to-registered-a", time.Since(begin))
	pod, err := workerPod(ctx, n)
	sc.Check(err)
	before := restarts(pod)
	if before != 0 {
		sc.Errorf("the worker restarted %d times before the switch", before)
	}

	if hubB.registered(ctx) {
		sc.Fatalf("hub-b's Cluster is Registered before the switch: the evidence below would prove nothing")
	}
	// hub-b first: it is the copy a worker connected to hub-a reads
	// unchanged (v1.6.4 rewrites hub-a's status; see e2e/worker).
	claimed := time.Now()
	for _, h := range []*workerHub{hubB, hubA} {
		sc.Check(h.publish(ctx, hubB.claim()))
	}
	// The kubelet can publish the new restartCount one status update before
	// the previous container's termination (seen under load: restartCount 1
	// with an empty lastState), so the wait is for both.
	var after, restarted *corev1.Pod
	sc.Check(waitFor(ctx, "the kubelet restarting the worker and reporting how it stopped", func() bool {
		p, err := workerPod(ctx, n)
		if err != nil || restarts(p) != before+1 {
			return false
		}
		if restarted == nil {
			restarted = p
			sc.Timing("claim-to-kubelet-restart", time.Since(claimed))
		}
		after = p
		return p.Status.ContainerStatuses[0].LastTerminationState.Terminated != nil
	}))
	if after == nil {
		sc.Fatalf("the kubelet did not restart the worker after the claim")
	}
	last := after.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 0 {
		sc.Errorf("the worker's last termination is %+v, want exit code 0 (a clean stop on the switch)", after.Status.ContainerStatuses[0].LastTerminationState)
	}
	if after.UID != pod.UID {
		sc.Errorf("the pod was replaced (uid %s, was %s): the kubelet did not restart the container", after.UID, pod.UID)
	}
	sc.Check(waitFor(ctx, "the restarted worker registered on hub-b", func() bool { return hubB.registered(ctx) }))
	writes, err := hubB.workerWritesSince(claimed)
	sc.Check(err)
	if writes == 0 {
		sc.Errorf("hub-b's audit log has no write from %s since the claim", hubSA)
	}
	sc.Timing("claim-to-registered-b", time.Since(claimed))
	exit := "unknown"
	if last != nil {
		exit = fmt.Sprint(last.ExitCode)
	}
	sc.Notef("restartCount %d -> %d (kubelet), last exit code %s; %d writes from the worker on hub-b after the claim", before, restarts(after), exit, writes)
	sc.PassWithTest()
}

func testWorkerQuiet(t *testing.T, n *node.Node, chart, note string, common []string, hubA *workerHub) {
	sc := beginScenario(t, suiteWorkerNode, "helm install, secondary unset: Ready, 5 min with restartCount 0 and no forbidden in its log", note)
	ctx := t.Context()
	begin := time.Now()
	if out, err := n.Helm(ctx, append([]string{"install", "worker", chart}, common...)...); err != nil {
		sc.Fatalf("%v\n%s", err, out)
	}
	defer uninstall(t, n)
	sc.Timing("helm-install-wait", time.Since(begin))
	sc.Check(waitFor(ctx, "the worker registered on hub-a", func() bool { return hubA.registered(ctx) }))
	pod, err := workerPod(ctx, n)
	sc.Check(err)
	ready := time.Now()
	// Polled, not slept through: a restart ends the scenario at once.
	for time.Since(ready) < quietRun {
		p, err := workerPod(ctx, n)
		sc.Check(err)
		if r := restarts(p); r != 0 || p.UID != pod.UID {
			sc.Fatalf("after %s the worker has restarted (restartCount %d, uid %s): %s", time.Since(ready).Round(time.Second), r, p.UID, podSummary(p))
		}
		select {
		case <-ctx.Done():
			sc.Fatalf("%v", ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
	sc.Timing("ran-without-restart", time.Since(ready))
	raw, err := n.Kubernetes().CoreV1().Pods(workerNamespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	sc.Check(err)
	log := string(raw)
	if strings.Count(log, "\n") < 5 {
		sc.Fatalf("the worker's log read through the API has %d lines: not its log", strings.Count(log, "\n"))
	}
	var forbidden []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(strings.ToLower(l), "forbidden") {
			forbidden = append(forbidden, l)
		}
	}
	if len(forbidden) > 0 {
		sc.Errorf("%d lines of the worker's log say forbidden, first: %s", len(forbidden), forbidden[0])
	}
	sc.Notef("restartCount 0 over %s; %d log lines read through the API, none forbidden", quietRun, strings.Count(log, "\n"))
	sc.PassWithTest()
}
