//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// testCARotation renews member1's CA on the real control plane: its
// kube-apiserver restarts on the same port serving a certificate of a CA it
// never presented, and the cluster Secret's caBundle is updated, either
// before the switch with old and new CA together (overlap, case A) or after
// it with the new CA only (replaced, case B). A Node created after the
// switch must reach status.nodeSummary through the cluster status
// controller's long-lived node informer. Pristine: the informer keeps the
// caBundle it was built with and fails with x509 errors while the Cluster
// stays Ready (health checks build fresh clients from the Secret) (RED).
// Patched: it follows the Secret (GREEN); with the overlap, no node
// reflector error at all.
func testCARotation(t *testing.T, b karmadacp.Build, replaced bool) {
	t.Helper()
	name := "ca-rotation-overlap"
	if replaced {
		name = "ca-rotation-replaced"
	}
	e := newEnv(t, b)
	s := begin(t, name, string(b), slices.Concat(standIns, []string{nodeStandIn})...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	m := e.joinMember1(ctx, s)
	cm := e.cp.Process(karmadacp.ControllerManager)
	baseline, err := e.baseline(ctx)
	if err != nil {
		s.Fatalf("baseline: %v", err)
	}
	oldCA, newCA := e.member.CAData(), e.member.NextCAData()
	if !replaced {
		if err := m.WriteCABundle(ctx, slices.Concat(oldCA, newCA)); err != nil {
			s.Fatalf("%v", err)
		}
		s.Notef("Secret %s/%s holds the old and the new CA before the switch", karmadacp.ClusterNamespace, memberName)
	}
	mark := len(cm.Log())
	killed := time.Now()
	if err := e.member.RestartWithNextCA(ctx); err != nil {
		s.Fatalf("restarting %s with a new CA: %v", memberName, err)
	}
	s.Mark(e2ereport.EventRotation)
	s.Timing("member-restart", time.Since(killed))
	updated := time.Now()
	if replaced {
		if err := m.WriteCABundle(ctx, newCA); err != nil {
			s.Fatalf("%v", err)
		}
		updated = time.Now()
		s.Notef("Secret %s/%s holds only the new CA, written after the switch", karmadacp.ClusterNamespace, memberName)
	}
	nodes, err := e.createNode(ctx, "after-ca")
	if err != nil {
		s.Fatalf("%v", err)
	}
	nodeMark := len(cm.Log())

	if b == karmadacp.Patched {
		st, err := e.waitCollected(ctx, nodes, recoverTimeout)
		if err != nil {
			s.Outcome(e2ereport.Fail, "long-lived path did not recover: %v (evidence: %s)", err, firstLine(cm.Log(), mark, NodeInformerUnknownAuthority))
			return
		}
		s.Mark(e2ereport.EventRecovery)
		s.Timing("secret-update-to-collected", time.Since(updated))
		if st.ReadySince != baseline.ReadySince {
			s.Notef("the Ready condition changed during the rotation: %s (baseline %s)", st, baseline)
		}
		if lines := karmada.Lines(cm.Log(), mark, MemberCABundlePickedUp); len(lines) > 0 {
			s.Notef("evidence: %s", lines[0])
		}
		failures := len(karmada.Lines(cm.Log(), mark, NodeInformerUnknownAuthority))
		if !replaced && failures > 0 {
			s.Outcome(e2ereport.Fail, "with old and new CA published before the switch, the node reflector still failed %d times: %s", failures, firstLine(cm.Log(), mark, NodeInformerUnknownAuthority))
			return
		}
		s.Outcome(e2ereport.Pass, "GREEN: the Node created after the switch reached status.nodeSummary (%s); node reflector x509 errors after the switch: %d", st, failures)
		return
	}

	// Pristine: wait for the node reflector to be refused with the Node in
	// place, then blindSettlePeriods status periods more.
	deadline := time.Now().Add(reflectorRetryBound)
	var refusedAt time.Time
	for {
		st, err := e.clusterStatus(ctx)
		if err != nil {
			s.Fatalf("reading cluster %s: %v", memberName, err)
		}
		if st.HasNodeSummary && st.Nodes == nodes {
			s.Outcome(e2ereport.Pass, "the pristine build saw the Node created after the CA switch (%s): the scenario no longer reproduces the bug", st)
			return
		}
		if refusedAt.IsZero() && len(karmada.Lines(cm.Log(), nodeMark, NodeInformerUnknownAuthority)) > 0 {
			refusedAt = time.Now()
			s.MarkAt(e2ereport.EventFirstFailure, refusedAt)
		}
		switch {
		case !refusedAt.IsZero() && time.Since(refusedAt) >= blindSettlePeriods*karmadacp.DefaultStatusUpdateFrequency:
			if st.ReadySince == baseline.ReadySince {
				s.Notef("short-lived path: the Cluster stayed Ready (condition unchanged since %s)", baseline.ReadySince)
			} else {
				s.Notef("short-lived path: the Ready condition changed: %s (baseline %s)", st, baseline)
			}
			s.Notef("evidence: %s", firstLine(cm.Log(), nodeMark, NodeInformerUnknownAuthority))
			s.Outcome(e2ereport.RedAsExpected, "RED: status.nodeSummary.totalNum stayed %d while the member had %d Nodes; the node reflector fails with x509 errors against the renewed CA (%d since the switch)",
				st.Nodes, nodes, len(karmada.Lines(cm.Log(), mark, NodeInformerUnknownAuthority)))
			return
		case time.Now().After(deadline):
			s.Fatalf("inconclusive: no node reflector x509 error within %s after the Node was created, and the Node was not seen either (last: %s)", reflectorRetryBound, st)
		}
		select {
		case <-ctx.Done():
			s.Fatalf("%v", ctx.Err())
		case <-time.After(clusterPoll):
		}
	}
}

func testCAOverlap(t *testing.T, b karmadacp.Build)  { testCARotation(t, b, false) }
func testCAReplaced(t *testing.T, b karmadacp.Build) { testCARotation(t, b, true) }

// testSearchCARotation renews member1's CA for karmada-search (restart with
// a certificate of a new CA), with the Secret's caBundle either replaced
// after the switch (case B) or holding old and new CA before it (overlap,
// case A), then creates a Deployment on member1. The cache path is served
// by the ResourceRegistry controller's member informer, built once:
// pristine keeps the caBundle it was built with and never serves the new
// object (RED, x509 errors as evidence, the Cluster Ready); patched serves
// it (GREEN), and with the overlap logs no x509 error at all. The proxy
// path builds a client per request from the Secret and is not judged.
func testSearchCARotation(t *testing.T, b karmadacp.Build, replaced bool) {
	name := "search-ca-rotation-overlap"
	if replaced {
		name = "search-ca-rotation"
	}
	pristine := b == karmadacp.Pristine
	e := newEnv(t, b, withSearch())
	s := begin(t, name, string(b), append(slices.Clone(standIns), searchStandIns...)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	m := e.joinMember1(ctx, s)
	if _, err := e.cp.API.Dynamic().Resource(karmadacp.ResourceRegistryGVR).Create(ctx, ResourceRegistry(registryName, memberName), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating ResourceRegistry %s: %v", registryName, err)
	}
	memberDeployments := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace)
	if _, err := memberDeployments.Create(ctx, Deployment(workloadNamespace, "before", "search", 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/before on %s: %v", workloadNamespace, memberName, err)
	}
	if err := e.waitSearch(ctx, cachePath, "before", searchTimeout, nil); err != nil {
		s.Fatalf("before the CA switch: %v", err)
	}
	search := e.cp.Process(karmadacp.Search)
	ready, err := e.clusterStatus(ctx)
	if err != nil {
		s.Fatalf("reading cluster %s: %v", memberName, err)
	}
	mark := len(search.Log())
	updated, err := switchCA(ctx, s, e.member, m, replaced)
	if err != nil {
		s.Fatalf("%v", err)
	}
	createdMark := len(search.Log())
	if _, err := memberDeployments.Create(ctx, Deployment(workloadNamespace, "after", "search", 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/after on %s: %v", workloadNamespace, memberName, err)
	}
	timeout, window := searchTimeout, (func() string)(nil)
	if pristine {
		timeout, window = reflectorRetryBound+blindSettle, refusedWindow(s, search.Log, createdMark, MemberWatchUnknownAuthority)
	}
	err = e.waitSearch(ctx, cachePath, "after", timeout, window)
	if search.Exited() {
		s.Errorf("%s exited (code %d)", search.Name(), search.ExitCode())
	}
	switch judgeStep(pristine, err, "") {
	case stepPassed:
		if pristine {
			s.Outcome(e2ereport.Pass, "the pristine build served the object created after the CA switch: the scenario no longer reproduces the bug")
			return
		}
		s.Mark(e2ereport.EventRecovery)
		s.Timing(map[bool]string{true: "secret-update-to-cache-hit", false: "switch-to-cache-hit"}[replaced], time.Since(updated))
		if lines := karmada.Lines(search.Log(), mark, MemberCABundlePickedUp); len(lines) > 0 {
			s.Notef("evidence: %s", lines[0])
		}
		if !replaced {
			if n := len(karmada.Lines(search.Log(), mark, UnknownAuthority)); n > 0 {
				s.Outcome(e2ereport.Fail, "with old and new CA published before the switch, karmada-search still logged %d x509 errors: %s", n, firstLine(search.Log(), mark, UnknownAuthority))
				return
			}
			s.Outcome(e2ereport.Pass, "GREEN: with old and new CA published before the switch, Deployment %s/after created after it is served by the cache path and karmada-search logged no x509 error at all", workloadNamespace)
			return
		}
		s.Outcome(e2ereport.Pass, "GREEN: after member1's CA was renewed and the Secret updated, Deployment %s/after is served by the cache path (member Deployment informer x509 errors since the switch: %d)",
			workloadNamespace, len(karmada.Lines(search.Log(), mark, MemberWatchUnknownAuthority)))
	case stepBroke:
		s.Notef("cache path: %v", err)
		s.Notef("evidence: %s", firstLine(search.Log(), createdMark, MemberWatchUnknownAuthority))
		if pristine {
			s.Notef("short-lived path: %s", e.readyNote(ctx, ready))
			s.Outcome(e2ereport.RedAsExpected, "RED at the cache path: the member Deployment informer fails with x509 errors against the renewed CA (%d since the switch)", len(karmada.Lines(search.Log(), mark, MemberWatchUnknownAuthority)))
			return
		}
		s.Outcome(e2ereport.Fail, "broke at the cache path")
	default:
		s.Errorf("cache path: inconclusive: %v", err)
	}
}

// testMetricsCARotation renews member1's CA for karmada-metrics-adapter
// (restart with a certificate of a new CA), with the Secret's caBundle
// either replaced after the switch (case B) or holding old and new CA
// before it (overlap, case A), then creates a Pod on member1. The adapter
// serves its PodMetrics only once its member Pod informer, built once, has
// listed it: pristine keeps the caBundle it was built with (RED, x509
// errors as evidence, the Cluster Ready); patched follows the Secret
// (GREEN), and with the overlap logs no x509 error at all.
func testMetricsCARotation(t *testing.T, b karmadacp.Build, replaced bool) {
	name := "metrics-ca-rotation-overlap"
	if replaced {
		name = "metrics-ca-rotation"
	}
	pristine := b == karmadacp.Pristine
	e := newEnv(t, b, withMetricsAdapter(), withMemberMetrics())
	s := begin(t, name, string(b), append(slices.Clip(standIns), metricsStandIns...)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	pm, err := metricsclient.NewForConfig(e.cp.API.AdminConfig())
	if err != nil {
		s.Fatalf("metrics client for %s: %v", e.cp.API.Name(), err)
	}
	m := e.joinMember1(ctx, s)
	if err := e.createMemberPod(ctx, probeBefore); err != nil {
		s.Fatalf("%v", err)
	}
	if _, err := waitPodMetrics(ctx, pm, probeBefore, metricsTimeout, nil); err != nil {
		s.Fatalf("before the CA switch: %v", err)
	}
	adapter := e.cp.Process(karmadacp.MetricsAdapter)
	ready, err := e.clusterStatus(ctx)
	if err != nil {
		s.Fatalf("reading cluster %s: %v", memberName, err)
	}
	mark := len(adapter.Log())
	updated, err := switchCA(ctx, s, e.member, m, replaced)
	if err != nil {
		s.Fatalf("%v", err)
	}
	if err := e.createMemberPod(ctx, probeAfter); err != nil {
		s.Fatalf("%v", err)
	}
	createdMark := len(adapter.Log())
	timeout, window := metricsTimeout, (func() string)(nil)
	if pristine {
		timeout, window = reflectorRetryBound+blindSettle, refusedWindow(s, adapter.Log, createdMark, PodInformerUnknownAuthority)
	}
	_, err = waitPodMetrics(ctx, pm, probeAfter, timeout, window)
	if adapter.Exited() {
		s.Errorf("%s exited (code %d)", adapter.Name(), adapter.ExitCode())
	}
	failures := len(karmada.Lines(adapter.Log(), mark, PodInformerUnknownAuthority))
	switch judgeStep(pristine, err, "") {
	case stepPassed:
		if pristine {
			s.Outcome(e2ereport.Pass, "the pristine build served the new Pod's metrics after the CA switch: the scenario no longer reproduces the bug")
			return
		}
		s.Mark(e2ereport.EventRecovery)
		s.Timing(map[bool]string{true: "secret-update-to-first-metric", false: "switch-to-first-metric"}[replaced], time.Since(updated))
		if lines := karmada.Lines(adapter.Log(), mark, MemberCABundlePickedUp); len(lines) > 0 {
			s.Notef("evidence: %s", lines[0])
		}
		if !replaced {
			if n := len(karmada.Lines(adapter.Log(), mark, UnknownAuthority)); n > 0 {
				s.Outcome(e2ereport.Fail, "with old and new CA published before the switch, karmada-metrics-adapter still logged %d x509 errors: %s", n, firstLine(adapter.Log(), mark, UnknownAuthority))
				return
			}
			s.Outcome(e2ereport.Pass, "GREEN: with old and new CA published before the switch, PodMetrics %s/%s of a Pod created after it is served and karmada-metrics-adapter logged no x509 error at all", workloadNamespace, probeAfter)
			return
		}
		s.Outcome(e2ereport.Pass, "GREEN: after member1's CA was renewed and the Secret updated, PodMetrics %s/%s is served (member Pod informer x509 errors since the switch: %d)", workloadNamespace, probeAfter, failures)
	case stepBroke:
		s.Notef("new Pod's metrics: %v", err)
		s.Notef("evidence: %s", firstLine(adapter.Log(), createdMark, PodInformerUnknownAuthority))
		if pristine {
			s.Notef("short-lived path: %s", e.readyNote(ctx, ready))
			s.Outcome(e2ereport.RedAsExpected, "RED: the new Pod's metrics are never served; the member Pod informer fails with x509 errors against the renewed CA (%d since the switch)", failures)
			return
		}
		s.Outcome(e2ereport.Fail, "the new Pod's metrics were not served")
	default:
		s.Errorf("new Pod's metrics: inconclusive: %v", err)
	}
}

func testSearchCAOverlap(t *testing.T, b karmadacp.Build)   { testSearchCARotation(t, b, false) }
func testSearchCAReplaced(t *testing.T, b karmadacp.Build)  { testSearchCARotation(t, b, true) }
func testMetricsCAOverlap(t *testing.T, b karmadacp.Build)  { testMetricsCARotation(t, b, false) }
func testMetricsCAReplaced(t *testing.T, b karmadacp.Build) { testMetricsCARotation(t, b, true) }

// switchCA restarts member's kube-apiserver with a certificate of its next
// CA and updates m's Secret: before the switch with old and new CA
// (overlap), or after it with the new CA alone (replaced). It returns when
// the Secret last changed or, with the overlap, when the member served the
// new certificate: where the scenario's recovery is timed from.
func switchCA(ctx context.Context, s *e2ereport.Run, member *controlplane.Cluster, m *karmadacp.Member, replaced bool) (time.Time, error) {
	oldCA, newCA := member.CAData(), member.NextCAData()
	if !replaced {
		if err := m.WriteCABundle(ctx, slices.Concat(oldCA, newCA)); err != nil {
			return time.Time{}, err
		}
		s.Notef("Secret %s/%s holds the old and the new CA before the switch", karmadacp.ClusterNamespace, memberName)
	}
	if err := member.RestartWithNextCA(ctx); err != nil {
		return time.Time{}, fmt.Errorf("restarting %s with a new CA: %w", memberName, err)
	}
	s.Mark(e2ereport.EventRotation)
	if !replaced {
		return time.Now(), nil
	}
	if err := m.WriteCABundle(ctx, newCA); err != nil {
		return time.Time{}, err
	}
	s.Notef("Secret %s/%s holds only the new CA, written after the switch", karmadacp.ClusterNamespace, memberName)
	return time.Now(), nil
}

// readyNote says whether member1's Cluster stayed Ready since before, as
// its status controller (a client built afresh from the Secret each time)
// reports it.
func (e *env) readyNote(ctx context.Context, before karmada.ClusterStatus) string {
	st, err := e.clusterStatus(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("reading cluster %s: %v", memberName, err)
	case st.Ready && before.Ready && st.ReadySince == before.ReadySince:
		return fmt.Sprintf("the Cluster stayed Ready (condition unchanged since %s, before the switch)", before.ReadySince)
	default:
		return fmt.Sprintf("the Ready condition changed: %s (before the switch: %s)", st, before)
	}
}
