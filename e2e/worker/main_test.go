//go:build e2e

package worker

import (
	"fmt"
	"github.com/holdfast-dist/holdfast/internal/harness/hubcrds"
	"os"
	"sync"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// The two suites this package reports.
const (
	suiteFailover      = "worker-hub-failover"
	suiteOwnCredential = "worker-own-credential"
)

var recorders = struct {
	sync.Mutex
	bySuite map[string]*e2ereport.Recorder
	used    map[string]bool
}{bySuite: map[string]*e2ereport.Recorder{}, used: map[string]bool{}}

// setupNotes describe each suite's stand-ins; the first scenario of a run
// carries them into the report, which has no per-suite notes.
var setupNotes = map[string]string{
	suiteFailover: "setup: hub-a, hub-b and the worker cluster are each etcd " + toolcache.Etcd.Version + " + kube-apiserver " + toolcache.KubeAPIServer.Version + " on 127.0.0.1 " +
		"(no controller-manager, no kubelet). Hub CRDs: " + hubcrds.APIsModule + " " + hubcrds.APIsVersion + " crd/, the Cluster CRD's status schema " +
		"extended in memory with activeController {endpoint, caBundle, activeIdentity, lastUpdated} (" + hubcrds.APIsVersion + " lacks it and the " +
		"API server would prune it). The test plays both hub controllers, writing status.activeController through the status subresource. " +
		"Worker cluster: worker-operator's config/crd/bases (no stand-in CRD needed) and one Node object (ExternalIP 192.0.2.10, data only). " +
		"The worker's RBAC on each hub and on the worker cluster is cluster-admin on a ServiceAccount (authorization is not under test); " +
		"the hubs' Cluster has spec.clusterProperty.monitoring.kubernetesDashboard.enabled=true, so the worker skips copying a dashboard " +
		"Secret that nothing here creates. " + fmt.Sprintf("Follower tuning: interval %s, timeout %s, %d confirmations unless a scenario says otherwise.",
		resolveInterval, resolveTimeout, switchConfirmations),
	suiteOwnCredential: "setup: the clusters of worker-hub-failover, primary hub only. The worker's own credential is a ServiceAccount " +
		"token read through a kubeconfig tokenFile, as a pod reads its projected token; " +
		fmt.Sprintf("guard threshold %d, window %s. ", testGuard.Threshold, testGuard.Window) + "After the " +
		"revocation or rotation the worker cluster's kube-apiserver is restarted, so the worker's watches re-list: what an API server " +
		"rollout or a watch timeout (5-10 min) does, brought forward.",
}

func TestMain(m *testing.M) {
	root, err := toolcache.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, s := range []string{suiteFailover, suiteOwnCredential, suiteChartRBAC} {
		recorders.bySuite[s] = e2ereport.NewRecorder(root, s)
	}
	code := m.Run()

	if env := shared.env; env != nil {
		env.mu.Lock()
		for _, r := range recorders.bySuite {
			for k, v := range env.versions {
				r.SetVersion(k, v)
			}
		}
		env.mu.Unlock()
		env.stop(code != 0)
	}
	// A suite none of whose scenarios ran (go test -run picked others) keeps
	// the report of its last run rather than an empty one.
	for s, r := range recorders.bySuite {
		if !recorders.used[s] {
			continue
		}
		if err := r.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "writing the %s report: %v\n", s, err)
			code = 1
		}
	}
	os.Exit(code)
}

// beginScenario records one scenario in its suite's report when the
// (sub)test ends. Its result follows the test's (e2ereport.Run.PassWithTest):
// a failed test is "fail", a passing one is what e2ereport.Catalog expects
// of the row: "pass" for the patched binary, "red-as-expected" for the
// pristine one.
func beginScenario(t *testing.T, suite, name string, bin workerBinary) *e2ereport.Run {
	t.Helper()
	// What the row must show is e2ereport.Catalog's.
	s := e2ereport.Scenario{Suite: suite, Name: name, Binary: "patched"}
	if bin.Pristine {
		s.Binary = "pristine"
	}
	recorders.Lock()
	if !recorders.used[suite] {
		s.Notes = append(s.Notes, setupNotes[suite])
	}
	recorders.used[suite] = true
	rec := recorders.bySuite[suite]
	recorders.Unlock()
	run := rec.Begin(t, s)
	run.PassWithTest()
	return run
}
