//go:build e2e

package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// suiteChartRBAC is the report suite of the worker run with its chart's RBAC.
const suiteChartRBAC = "worker-chart-rbac"

// chartServiceAccount is the chart's ServiceAccount for the worker (upstream's
// kubeslice-controller-manager), the identity the chart's bindings name.
const chartServiceAccount = "kubeslice-controller-manager"

// workerControllers are the controllers v1.6.4's main registers with the
// worker manager, by controller-runtime's name (the For type's kind, lower
// case). Each logs "Starting Controller" before it waits for its caches and
// "Starting workers" once they synced; a cache that cannot list or watch its
// type never syncs, and after CacheSyncTimeout (2 min) the manager exits 1.
var workerControllers = []string{"slice", "slicegateway", "serviceexport", "serviceimport", "namespace", "networkpolicy"}

// cacheSyncTimeout is controller-runtime's default CacheSyncTimeout, which
// v1.6.4 leaves as it is.
const cacheSyncTimeout = 2 * time.Minute

// syncExitMargin is what the worker's startup before its controllers start
// and its shutdown after the timeout may add on a loaded machine (a few
// seconds measured).
const syncExitMargin = 30 * time.Second

// The manager's exit line when a cache never synced, and the part of it
// that names the refused kind (v1.6.4's role.yaml refuses two).
const logManagerProblem = "problem running manager"

var logCacheSyncTimeout = regexp.MustCompile(`timed out waiting for cache to be synced for Kind \*v1\.(StatefulSet|PodDisruptionBudget)`)

// logStartingWorkers is controller-runtime's line once a controller's caches
// synced; it names the controller.
var logStartingWorkers = regexp.MustCompile(`"Starting workers".*"controller":"([a-z]+)"|"controller":"([a-z]+)".*"Starting workers"`)

func init() {
	setupNotes[suiteChartRBAC] = "setup: per row, a fresh worker cluster (etcd " + toolcache.Etcd.Version + " + kube-apiserver " +
		toolcache.KubeAPIServer.Version + " on 127.0.0.1, audit log at Metadata level, no kubelet) holding exactly what `helm template " +
		"--include-crds` of charts/worker-operator renders from that row's tree (helm " + toolcache.Helm.Version + " from the tool cache, " +
		"values ci/primary-values.yaml): the CRDs, the ServiceAccount " + chartServiceAccount + ", the ClusterRole kubeslice-manager-role " +
		"(config/rbac/role.yaml), the leader-election Role and both bindings; plus the namespace " + podNamespace + " and one Node (data). " +
		"The worker runs as that ServiceAccount (a TokenRequest token read through a kubeconfig tokenFile), not cluster-admin. Its hub is " +
		"worker-hub-failover's hub-a, where the worker's credential stays cluster-admin: the hub's RBAC is the KubeSlice controller's, not this chart's. " +
		"Not exercised: --leader-elect (controller-runtime needs the in-cluster namespace file to find its lease namespace), webhooks " +
		"(ENABLE_WEBHOOKS=false), and the paths only a slice, a gateway or an onboarded namespace take (docs/worker-operator.md lists them from the code)."
}

// TestWorkerChartRBAC is the worker-chart-rbac suite: the worker, run with
// the RBAC its chart renders, gets no 403 and syncs every cache. The
// patched row renders the chart from the patched tree (patch
// 0006-rbac-markers-statefulsets-pdb-events); the pristine row renders it
// from the pristine tree and runs the pristine binary, and is expected RED:
// v1.6.4's role.yaml lets the worker neither list StatefulSets nor watch
// PodDisruptionBudgets, which it needs for the slice and slicegateway caches.
func TestWorkerChartRBAC(t *testing.T) {
	env := environmentFor(t, suiteChartRBAC)
	t.Run("patched", func(t *testing.T) { testChartRBAC(t, env, env.binary) })
	t.Run("pristine", func(t *testing.T) {
		bin, err := findWorkerBinary(env.root, true)
		if err != nil {
			sc := beginScenario(t, suiteChartRBAC, "chart RBAC (pristine upstream role.yaml): 403s, caches never sync", workerBinary{Pristine: true})
			sc.Fatalf("the pristine row is the gate's evidence that the fix is still needed: %v", err)
		}
		testChartRBAC(t, env, bin)
	})
}

// testChartRBAC starts a worker cluster with the chart of bin's tree, runs
// bin as the chart's ServiceAccount against hub-a, and checks both audit
// logs for 403s and the worker's log for every controller's cache sync.
func testChartRBAC(t *testing.T, env *environment, bin workerBinary) {
	name := "chart RBAC: caches sync, no 403 on the worker cluster or hub-a"
	if bin.Pristine {
		name = "chart RBAC (pristine upstream role.yaml): 403s, caches never sync"
	}
	sc := beginScenario(t, suiteChartRBAC, name, bin)
	ctx := context.Background()
	rendered, err := renderWorkerChart(ctx, env.root, bin.Pristine, filepath.Join(env.dir, "chart-"+kind(bin)))
	sc.Check(err)
	cluster, auditLog, err := env.startChartCluster(ctx, "chart-rbac-"+kind(bin), rendered)
	if cluster != nil { // also when applying the chart failed: its processes run
		t.Cleanup(func() {
			if err := cluster.Stop(); err != nil {
				t.Errorf("stopping %s: %v", cluster.Name(), err)
			}
		})
	}
	sc.Check(err)
	kubeconfig, err := env.chartCredential(ctx, cluster)
	sc.Check(err)

	sc.Check(env.hubA.resetStatus(ctx))
	sc.Check(env.hubA.removeFinalizers(ctx))
	hubEvents, err := env.hubA.workerRequests()
	sc.Check(err)
	hubMark := len(hubEvents)
	s := env.settings(t, nil)
	s.Kubeconfig = kubeconfig
	w := env.startWorker(t, "chart-rbac-"+kind(bin), bin, s)

	if bin.Pristine {
		expectForbidden(ctx, sc, w, auditLog)
		return
	}
	sc.Check(w.waitReconciled(ctx, env.hubA))
	synced, err := waitCachesSynced(ctx, w)
	sc.Check(err)
	sc.Timing("start-to-reconciled-and-synced", time.Since(w.started))
	// An event the worker repeats is written with an update: evidence that
	// the events rule is used, not only granted. The cluster reconciler
	// records one on every reconcile of its Cluster.
	sc.Check(waitUntil(ctx, w, "an event update by the worker", func(context.Context) (bool, error) {
		events, err := readAuditLog(auditLog)
		if err != nil {
			return false, err
		}
		return requestMultiset(answered(sentBy(events, workerAgent), 200))["update events"] > 0, nil
	}))

	workerEvents, err := readAuditLog(auditLog)
	sc.Check(err)
	workerEvents = sentBy(workerEvents, workerAgent)
	hubEvents, err = env.hubA.workerRequests()
	sc.Check(err)
	hubEvents = hubEvents[hubMark:]
	for _, c := range []struct {
		where  string
		events []auditEvent
	}{{"the worker cluster", workerEvents}, {"hub-a", hubEvents}} {
		if forbidden := answered(c.events, 403); len(forbidden) > 0 {
			sc.Fatalf("%s answered the worker 403 for: %s", c.where, formatMultiset(requestMultiset(forbidden)))
		}
	}
	if strings.Contains(strings.ToLower(w.proc.Log()), "forbidden") {
		sc.Fatalf("the worker's log mentions forbidden; see %s", w.proc.LogFile())
	}
	sc.Notef("caches synced for %s; the worker reconciled its Cluster on hub-a; %d requests to the worker cluster and %d to hub-a, none answered 403 "+
		"(worker cluster: %s)", strings.Join(synced, ", "), len(workerEvents), len(hubEvents), formatMultiset(watchesOnce(requestMultiset(workerEvents))))
}

// kind names a row in folder and process names.
func kind(bin workerBinary) string {
	if bin.Pristine {
		return "pristine"
	}
	return "patched"
}

// expectForbidden is the pristine row: v1.6.4's rules are refused for the
// two informers the issue names, and the controllers that need them never
// start their workers.
func expectForbidden(ctx context.Context, sc *e2ereport.Run, w *runningWorker, auditLog string) {
	want := []string{"list statefulsets", "watch poddisruptionbudgets"}
	var forbidden map[string]int
	err := waitUntil(ctx, w, "403s for "+strings.Join(want, " and "), func(context.Context) (bool, error) {
		events, err := readAuditLog(auditLog)
		if err != nil {
			return false, err
		}
		forbidden = requestMultiset(answered(sentBy(events, workerAgent), 403))
		for _, k := range want {
			if forbidden[k] == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		sc.Fatalf("with upstream's role.yaml the worker cluster never answered %s with 403 (%v): upstream may grant them now, and "+
			"patch 0006 may be superseded; 403s seen: %s", strings.Join(want, " and "), err, formatMultiset(forbidden))
	}
	// Each controller's Kind sources wait for the whole shared cache
	// (controller-runtime v0.20 Cache.WaitForCacheSync), so one refused
	// informer holds every controller until CacheSyncTimeout (2 min) ends
	// the manager with exit 1: the crash loop seen on a real node.
	exited, err := w.waitExit(cacheSyncTimeout + syncExitMargin)
	sc.Check(err)
	sc.Timing("start-to-exit", exited.Sub(w.started))
	if code := w.proc.ExitCode(); code != 1 {
		sc.Fatalf("exit code = %d, want 1 (the manager's caches never synced)", code)
	}
	// The manager's last line names whichever controller's wait ended first
	// (every one waits for the whole cache, so it may be any Kind); the
	// refused informer's timeout is logged by its own controller, before or
	// after that line.
	log := w.proc.Log()
	if !strings.Contains(log, logManagerProblem) {
		sc.Fatalf("the worker exited 1 without %q", logManagerProblem)
	}
	line := ""
	for _, l := range strings.Split(log, "\n") {
		if logCacheSyncTimeout.MatchString(l) {
			line = l
			break
		}
	}
	if line == "" {
		// Under load the manager may stop every controller before the
		// refused informer's own timeout line is written; the 403s in the
		// audit log and the exit are the evidence then.
		sc.Notef("RED as expected: the worker cluster answered the worker 403 for %s, and %s after its start the worker exited 1 with %q (the refused informer's own timeout line was not written before the manager stopped)",
			formatMultiset(forbidden), exited.Sub(w.started).Round(time.Second), logManagerProblem)
		return
	}
	sc.Notef("RED as expected: the worker cluster answered the worker 403 for %s, and %s after its start the worker exited 1 with %s",
		formatMultiset(forbidden), exited.Sub(w.started).Round(time.Second), logCacheSyncTimeout.FindString(line))
}

// answered keeps the events of requests answered with code.
func answered(events []auditEvent, code int) []auditEvent {
	var out []auditEvent
	for _, e := range events {
		if e.ResponseStatus.Code == code {
			out = append(out, e)
		}
	}
	return out
}

// startedWorkers returns the controllers whose "Starting workers" line is in
// log.
func startedWorkers(log string) map[string]bool {
	started := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		if m := logStartingWorkers.FindStringSubmatch(line); m != nil {
			started[m[1]+m[2]] = true
		}
	}
	return started
}

// waitCachesSynced waits until every worker controller logged "Starting
// workers" and returns their names.
func waitCachesSynced(ctx context.Context, w *runningWorker) ([]string, error) {
	var missing []string
	err := waitUntil(ctx, w, "every worker controller's caches to sync", func(context.Context) (bool, error) {
		started := startedWorkers(w.proc.Log())
		missing = missing[:0]
		for _, c := range workerControllers {
			if !started[c] {
				missing = append(missing, c)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w; not started: %s", err, strings.Join(missing, ", "))
	}
	return workerControllers, nil
}

// renderWorkerChart stages charts/worker-operator from the default pin's
// patched or pristine tree (as `holdfast charts build` does from the
// patched one) into dir and returns `helm template --include-crds` of it in
// the worker's namespace.
func renderWorkerChart(ctx context.Context, root string, pristine bool, dir string) ([]byte, error) {
	b, err := build.LocateDefault(root, upstreamName, pristine)
	if err != nil {
		return nil, err
	}
	pin, err := b.Upstream.Pin("")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(b.Tree, "config", "rbac", "role.yaml")); err != nil {
		flag := ""
		if pristine {
			flag = " --pristine"
		}
		return nil, fmt.Errorf("the %s tree: %w; build it first: go run ./cmd/holdfast build --upstream %s%s", b.Kind(), err, upstreamName, flag)
	}
	var chart charts.Chart
	for _, c := range charts.Charts {
		if c.Upstream == upstreamName {
			chart = c
		}
	}
	staged, err := chart.Stage(dir, root, b.Tree, pin)
	if err != nil {
		return nil, err
	}
	helmPath, err := toolcache.Ensure(ctx, root, toolcache.Helm)
	if err != nil {
		return nil, err
	}
	helm := charts.Helm{Path: helmPath, Env: []string{
		"HOME=" + dir,
		"HELM_CACHE_HOME=" + filepath.Join(dir, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "helm", "config"),
		"HELM_DATA_HOME=" + filepath.Join(dir, "helm", "data"),
		"KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig"),
	}}
	return helm.Run(ctx, "template", "rel", staged, "--namespace", podNamespace, "--include-crds",
		"--values", filepath.Join(root, charts.WorkerOperatorDir, "ci", "primary-values.yaml"))
}

// chartKinds are the rendered objects applied to the worker cluster: what
// the chart grants and the CRDs the worker's caches watch. The Deployment,
// Service and friends are left out; the worker runs as a process.
var chartKinds = map[string]bool{
	"CustomResourceDefinition": true, "ServiceAccount": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
}

// selectKinds returns the documents of rendered whose kind is in kinds, and
// the sorted "Kind/name" of each.
func selectKinds(rendered []byte, kinds map[string]bool) ([]byte, []string, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(rendered)))
	var out bytes.Buffer
	var names []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			sort.Strings(names)
			return out.Bytes(), names, nil
		}
		if err != nil {
			return nil, nil, err
		}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, nil, fmt.Errorf("a rendered document: %w", err)
		}
		if !kinds[meta.Kind] {
			continue
		}
		names = append(names, meta.Kind+"/"+meta.Metadata.Name)
		out.WriteString("---\n")
		out.Write(doc)
		out.WriteString("\n")
	}
}

// startChartCluster starts a worker cluster with an audit log and the
// chart's CRDs, ServiceAccount and RBAC, the worker's namespace and one Node.
func (e *environment) startChartCluster(ctx context.Context, name string, rendered []byte) (*controlplane.Cluster, string, error) {
	dir := filepath.Join(e.dir, name)
	audit, auditLog, err := auditFlags(dir)
	if err != nil {
		return nil, "", err
	}
	etcd, kas, err := controlplane.EnsureBinaries(ctx, e.root)
	if err != nil {
		return nil, "", err
	}
	c, err := controlplane.Start(ctx, controlplane.Options{Name: name, Dir: dir, Etcd: etcd, KubeAPIServer: kas, ExtraAPIServerFlags: audit})
	if err != nil {
		return nil, "", fmt.Errorf("starting cluster %s: %w", name, err)
	}
	objs, names, err := selectKinds(rendered, chartKinds)
	if err == nil && len(names) == 0 {
		err = errors.New("the rendered chart holds none of the CRDs, ServiceAccount and RBAC")
	}
	if err == nil {
		err = c.ApplyYAML(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+podNamespace+"}\n"))
	}
	if err == nil {
		err = c.ApplyYAML(ctx, objs)
	}
	if err == nil {
		err = createNode(ctx, c)
	}
	if err != nil {
		return c, "", fmt.Errorf("cluster %s: applying the chart's %d objects: %w", name, len(names), err)
	}
	return c, auditLog, nil
}

// chartCredential writes a kubeconfig for the chart's ServiceAccount on c,
// its token in a file as a pod's projected token is read, and returns its
// path.
func (e *environment) chartCredential(ctx context.Context, c *controlplane.Cluster) (string, error) {
	token, err := c.ServiceAccountToken(ctx, podNamespace, chartServiceAccount, tokenTTL)
	if err != nil {
		return "", fmt.Errorf("cluster %s: %w", c.Name(), err)
	}
	tokenFile := filepath.Join(e.dir, "credentials", c.Name()+".token")
	if err := writeFileAtomic(tokenFile, []byte(token)); err != nil {
		return "", err
	}
	kubeconfig := filepath.Join(e.dir, "credentials", c.Name()+".kubeconfig")
	return kubeconfig, c.WriteTokenKubeconfig(kubeconfig, tokenFile)
}
