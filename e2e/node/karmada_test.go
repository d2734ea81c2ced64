//go:build e2e

package node

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/holdfast-dist/holdfast/internal/harness/node"
	"github.com/holdfast-dist/holdfast/internal/harness/standin"
)

const (
	karmadaNamespace = "karmada-system"
	// karmadaRelease is the release name the chart's names derive from
	// (docs/node-images.md lists them for "rel").
	karmadaRelease = "rel"
	// etcdHostPath is the chart's etcd data hostPath (default values).
	etcdHostPath = "/var/lib/karmada-system/karmada-etcd"
)

// karmadaStandIns are the images the Karmada chart deploys besides
// holdfast's controller-manager (docs/node-images.md).
var karmadaStandIns = []string{
	standin.RefEtcd, standin.RefKubeAPIServer, standin.RefKubeControllerManager,
	standin.RefAggregatedAPIServer, standin.RefScheduler, standin.RefWebhook,
	standin.RefCfssl, standin.RefKubectl,
}

// pristineControllerManagerValues point the chart's controller-manager at
// upstream's image (the stand-in built from the pristine tree, under
// upstream's name; docs/node-images.md): the install the drop-in starts
// from. The digest key is holdfast's (make images fills it); empty, the
// chart renders the tag.
var pristineControllerManagerValues = []string{
	"--set", "controllerManager.image.registry=docker.io",
	"--set", "controllerManager.image.repository=karmada/karmada-controller-manager",
	"--set", "controllerManager.image.tag=v1.18.2",
	"--set", "controllerManager.image.digest=",
}

// karmadaInputs finds holdfast's karmada-controller-manager layout and the
// Karmada chart. The layout is `make images`' when there is one (the chart
// then renders its digest), else `make e2e-node-inputs`' amd64-only build in
// _output/node-images (the chart then renders the tag: charts build reads
// _output/images only).
func karmadaInputs(root string) (layout, chart string, err error) {
	layout, err = karmadaLayout(root, "karmada-controller-manager")
	if err != nil {
		return "", "", err
	}
	charts, _ := filepath.Glob(filepath.Join(root, "_output", "charts", "karmada-*.tgz"))
	if len(charts) != 1 {
		return "", "", fmt.Errorf("want one Karmada chart under _output/charts (make e2e-node-inputs), found %v", charts)
	}
	return layout, charts[0], nil
}

// karmadaLayout finds the image layout of one of holdfast's Karmada
// components, where karmadaInputs looks.
func karmadaLayout(root, component string) (string, error) {
	var layouts []string
	for _, dir := range []string{"images", "node-images"} {
		if layouts, _ = filepath.Glob(filepath.Join(root, "_output", dir, "karmada-*", component, "index.json")); len(layouts) > 0 {
			break
		}
	}
	if len(layouts) != 1 {
		return "", fmt.Errorf("want one %s image layout under _output/images or _output/node-images (make e2e-node-inputs), found %v", component, layouts)
	}
	return filepath.Dir(layouts[0]), nil
}

func testKarmada(t *testing.T, root string, n *node.Node, standIns *standInBuild) {
	ctx := t.Context()
	layout, chart, err := karmadaInputs(root)
	if err != nil {
		t.Fatal(err)
	}
	sc := beginScenario(t, suiteKarmadaNode, "helm install of the Karmada chart (host mode): every pod Running and Ready",
		fmt.Sprintf("setup: chart %s (release %q in %s) with default values but the controller-manager's image, upstream's v1.18.2 (the pristine stand-in; "+
			"holdfast's comes with the drop-in's helm upgrade), and helm --post-renderer e2e/node/auditrender giving karmada-apiserver an audit log; "+
			"every other image a stand-in (internal/harness/standin, docs/node-images.md); cluster DNS is the CoreDNS stand-in on :%d behind a Service on :53; "+
			"etcd's hostPath is a private folder of the run", filepath.Base(chart), karmadaRelease, karmadaNamespace, 1053))

	imgs, waited, err := standIns.wait(t)
	if err != nil {
		sc.Fatalf("building the stand-in images: %v", err)
	}
	// What the build took, and what of it this scenario waited for (the
	// build starts with the node run).
	sc.Timing("stand-ins-build", standIns.took)
	sc.Timing("stand-ins-wait", waited)
	begin := time.Now()
	dns, ok := imgs[standin.RefCoreDNS]
	if !ok {
		sc.Fatalf("the stand-ins have no %s", standin.RefCoreDNS)
	}
	if err := n.StartDNS(ctx, dns.Layout); err != nil {
		sc.Fatalf("%v", err)
	}
	sc.Timing("dns-ready", time.Since(begin))
	begin = time.Now()
	for _, ref := range karmadaStandIns {
		img, ok := imgs[ref]
		if !ok {
			sc.Fatalf("the stand-ins have no %s", ref)
		}
		if _, err := n.ImportLayout(ctx, img.Layout); err != nil {
			sc.Fatalf("%v", err)
		}
	}
	cm, err := n.ImportLayout(ctx, layout)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	pristineImg, ok := imgs[standin.RefPristineControllerManager]
	if !ok {
		sc.Fatalf("the stand-ins have no %s", standin.RefPristineControllerManager)
	}
	pristine, err := n.ImportLayout(ctx, pristineImg.Layout)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	sc.Timing("images-import", time.Since(begin))
	t.Logf("holdfast's image %s (%s), upstream's stand-in %s", cm.Name, cm.ByDigest(), pristine.Name)
	renderer := filepath.Join(t.TempDir(), "auditrender")
	if err := goBuild(root, renderer, "./e2e/node/auditrender"); err != nil {
		sc.Fatalf("%v", err)
	}

	begin = time.Now()
	install := append([]string{"install", karmadaRelease, chart, "--namespace", karmadaNamespace, "--create-namespace", "--wait", "--timeout", "10m", "--post-renderer", renderer},
		pristineControllerManagerValues...)
	if out, err := n.Helm(ctx, install...); err != nil {
		sc.Fatalf("%v\n%s", err, out)
	}
	sc.Timing("helm-install-wait", time.Since(begin))

	// --wait covers the Deployments' rollout; every pod is read back
	// anyway: the Jobs' pods must have succeeded (or failed and been
	// retried to the Job's completion), the rest run Ready.
	pods, err := n.Kubernetes().CoreV1().Pods(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		sc.Fatalf("listing the pods in %s: %v", karmadaNamespace, err)
	}
	jobs, err := n.Kubernetes().BatchV1().Jobs(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		sc.Fatalf("listing the Jobs in %s: %v", karmadaNamespace, err)
	}
	var running []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if job, ok := retriedToCompletion(p, jobs.Items); ok {
			t.Logf("pod %s of Job %s failed and the Job retried it to completion: %s", p.Name, job, podSummary(p))
			continue
		}
		if p.Status.Phase != corev1.PodRunning || !podReady(p) {
			sc.Errorf("pod %s not Running and Ready: %s", p.Name, podSummary(p))
			continue
		}
		running = append(running, p.Name)
		// Restarts are allowed (the apiservers start before etcd answers,
		// as on any cluster) but shown, so a crash loop that ends Ready
		// is visible in the log.
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > 0 {
				t.Logf("pod %s container %s restarted %d times", p.Name, c.Name, c.RestartCount)
			}
		}
	}
	sort.Strings(running)
	sc.Timing("install-to-all-ready", time.Since(begin))
	want := []string{"etcd-0", "rel-aggregated-apiserver", "rel-apiserver", "rel-controller-manager", "rel-kube-controller-manager", "rel-scheduler", "rel-webhook"}
	for _, w := range want {
		found := false
		for _, r := range running {
			if r == w || strings.HasPrefix(r, w+"-") {
				found = true
			}
		}
		if !found {
			sc.Errorf("no Running and Ready pod of %s among %v", w, running)
		}
	}
	t.Logf("Running and Ready: %v", running)
	// etcd writes its member folder at once; on the host the hostPath is
	// the harness's empty mount point, or etcd's data leaked out of the
	// node's mount namespace.
	if entries, err := os.ReadDir(etcdHostPath); err == nil && len(entries) > 0 {
		sc.Errorf("etcd's hostPath %s has %d entries on the host (want them only in the node's mount namespace), first %s", etcdHostPath, len(entries), entries[0].Name())
	}
	sc.PassWithTest()
	if t.Failed() {
		return
	}
	var m *karmadaMember
	if !t.Run("member-push", func(st *testing.T) { m = testKarmadaMember(st, t, n) }) {
		return
	}
	f := &karmadaFlow{n: n, chart: chart, renderer: renderer, member: m,
		holdfast: cm, holdfastLayout: layout, pristine: pristine, pristineLayout: pristineImg.Layout}
	if !t.Run("rotation-dropin", f.testRotationDropIn) {
		return
	}
	t.Run("own-credential", f.testOwnCredential)
	// The estimator's and the agent's flows wait on the kubelet's volume
	// updates, certificate expiries and the guard, not on the cores, and
	// share nothing but karmada-apiserver: side by side they take the
	// longer one's time instead of the sum.
	t.Run("fleet", func(t *testing.T) {
		f.fleet(t, root)
	})
}

// fleet runs the estimator's and the agent's flows side by side.
func (f *karmadaFlow) fleet(t *testing.T, root string) {
	n := f.n
	t.Run("estimator", func(t *testing.T) {
		t.Parallel()
		layout, err := karmadaLayout(root, "karmada-scheduler-estimator")
		if err != nil {
			t.Fatal(err)
		}
		img, err := n.ImportLayout(t.Context(), layout)
		if err != nil {
			t.Fatal(err)
		}
		f.testEstimator(t, img.Name)
	})
	t.Run("agent", func(t *testing.T) {
		t.Parallel()
		layout, err := karmadaLayout(root, "karmada-agent")
		if err != nil {
			t.Fatal(err)
		}
		img, err := n.ImportLayout(t.Context(), layout)
		if err != nil {
			t.Fatal(err)
		}
		f.testAgent(t, img.Name)
	})
}
