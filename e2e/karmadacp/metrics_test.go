//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

const (
	// metricsTimeout bounds Karmada serving a member Pod's metrics when
	// it works: the adapter's member Pod informer sees the Pod (one watch
	// event), then a GET goes adapter -> member kube-apiserver ->
	// stand-in; well under a second, the rest is margin for a busy runner.
	metricsTimeout = 2 * time.Minute
	// probeBefore exists on the member before the rotation, probeAfter is
	// created after the member's restart.
	probeBefore = "probe-before"
	probeAfter  = "probe-after"
	// restClientRequests is client-go's request counter by code and host
	// (component-base's legacyregistry, which the adapter serves).
	restClientRequests = "rest_client_requests_total"
)

// metricsStandIns are the metrics scenario's stand-ins, on top of standIns.
var metricsStandIns = []string{
	"stand-in: no metrics-server or kubelet on the member; a metrics.k8s.io/v1beta1 server in the test process (TLS on 127.0.0.1, registered on the member's kube-apiserver as APIService v1beta1.metrics.k8s.io through the front-proxy flags, answering only the member's aggregator) serves fixed PodMetrics (7m CPU, 11Mi memory per container) for the Pods that exist on the member",
	"stand-in: the member's Pods are Pod objects created by the suite; none is scheduled or runs (no kubelet)",
	"karmada-metrics-adapter runs as upstream's Deployment runs it (JSON logs), registered for metrics.k8s.io and custom.metrics.k8s.io with the tree's APIServices",
}

// testMetrics is issue 14's scenario 3, karmada-metrics-adapter through
// rotation: Karmada's metrics.k8s.io PodMetrics of a member Pod, before the
// rotation, and of a Pod created on the member after rotation, revocation
// and a SIGKILL restart of its kube-apiserver.
func testMetrics(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b, withMetricsAdapter(), withMemberMetrics())
	s := begin(t, "metrics", string(b), append(slices.Clip(standIns), metricsStandIns...)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	s.Timing("metrics-adapter-start", e.cp.StartTimes()[karmadacp.MetricsAdapter])
	pm, err := metricsclient.NewForConfig(e.cp.API.AdminConfig())
	if err != nil {
		s.Fatalf("metrics client for %s: %v", e.cp.API.Name(), err)
	}

	m := e.joinMember1(ctx, s)
	ready := time.Now()

	if err := e.createMemberPod(ctx, probeBefore); err != nil {
		s.Fatalf("%v", err)
	}
	if _, err := waitPodMetrics(ctx, pm, probeBefore, metricsTimeout, nil); err != nil {
		s.Fatalf("before any rotation: %v", err)
	}
	s.Timing("ready-to-first-metric", time.Since(ready))
	s.Notef("before the rotation: Karmada's metrics.k8s.io served PodMetrics %s/%s relayed from %s (%s=%s, the stand-in's usage)", workloadNamespace, probeBefore, memberName, QuerySourceAnnotation, memberName)

	adapter := e.cp.Process(karmadacp.MetricsAdapter)
	metricsURL := e.cp.MetricsURL(karmadacp.MetricsAdapter)
	var before karmada.MemberCredential
	if mt, err := karmada.ScrapeMetrics(ctx, metricsURL); err == nil {
		before = mt.MemberCredential(memberName)
	} else {
		s.Errorf("scraping %s's %s: %v", adapter.Name(), metricsURL, err)
	}
	servedBefore := e.memberMetrics.Served()
	rotateMark := len(adapter.Log())
	defer countCredentials(s, e.cp, memberName).note()
	var mark int
	killed, restarted := rotateAndRestart(ctx, s, m, func() { mark = len(adapter.Log()) })
	if err := e.createMemberPod(ctx, probeAfter); err != nil {
		s.Fatalf("%v", err)
	}
	createdMark := len(adapter.Log())

	pristine := b == karmadacp.Pristine
	var broke []string
	fail := func(step string, err error, evidence string) {
		broke = append(broke, step)
		s.Notef("%s: %v", step, err)
		s.Notef("evidence (%s): %s", step, evidence)
	}

	// The Pod created after the restart: the adapter serves its metrics
	// only once its member Pod informer has listed or watched it.
	var window func() string
	timeout := metricsTimeout
	if pristine {
		// The informer's next attempt comes within client-go's reflector
		// backoff (at most [30s, 60s), reflectorRetryBound); a 401 then,
		// with the Pod on the member, shows it cannot see the Pod with the
		// token it holds, and blindSettle more shows nothing else does.
		window = refusedWindow(s, adapter.Log, createdMark, PodInformerUnauthorized)
		timeout = reflectorRetryBound + blindSettle
	}
	_, err = waitPodMetrics(ctx, pm, probeAfter, timeout, window)
	switch v := judgeStep(pristine, err, ""); {
	case v == stepPassed:
		s.Timing("restart-to-first-metric", time.Since(restarted))
	case v == stepBroke && pristine:
		s.Timing("restart-to-window-closed", time.Since(restarted))
		// The refusal after the Pod was created, not the watch broken by
		// the kill: that one is what keeps the Pod out of the cache.
		fail("new Pod's metrics served", err, firstLine(adapter.Log(), createdMark, PodInformerUnauthorized, MetricsQueryUnauthorized, Unauthorized))
	default:
		// Patched: a failure. Pristine: inconclusive, no 401 to show.
		s.Fatalf("%v; first 401 since the restart: %s", err, firstLine(adapter.Log(), mark, Unauthorized))
	}

	// The Pod from before: in the informer's cache already, so its
	// metrics depend only on the adapter's member dynamic client, which
	// GETs them at each request.
	timeout = metricsTimeout
	window = nil
	if b == karmadacp.Pristine {
		// Every request goes to the member with the client's token;
		// blindSettle of requests refused (401) the same way, each
		// logged, is conclusive.
		queried := len(adapter.Log())
		window = refusedWindow(s, adapter.Log, queried, MetricsQueryUnauthorized)
		timeout = blindSettle * 3
	}
	// A window that timed out without a refused query (the requests never
	// reached the member, or were refused without the line) shows nothing:
	// inconclusive, like the new Pod's.
	_, err = waitPodMetrics(ctx, pm, probeBefore, timeout, window)
	switch judgeStep(pristine, err, "") {
	case stepPassed:
		s.Timing("restart-to-earlier-pod-metric", time.Since(restarted))
	case stepBroke:
		fail("earlier Pod's metrics served", err, firstLine(adapter.Log(), mark, MetricsQueryUnauthorized, Unauthorized))
	default:
		s.Errorf("earlier Pod's metrics served: %v; first 401 since the restart: %s", err, firstLine(adapter.Log(), mark, Unauthorized))
	}

	if status, since, err := m.ClusterReady(ctx); err == nil {
		s.Notef("Cluster %s Ready=%s since %s (%s the member's kill)", memberName, status, since.Format(time.RFC3339), relative(since, killed))
	}
	s.Notef("the member's stand-in served %d PodMetrics since the rotation", e.memberMetrics.Served()-servedBefore)
	s.Notef("karmada-metrics-adapter 401s logged since the restart: member Pod informer %d, PodMetrics queries %d, any %d",
		len(karmada.Lines(adapter.Log(), mark, PodInformerUnauthorized)), len(karmada.Lines(adapter.Log(), mark, MetricsQueryUnauthorized)), len(karmada.Lines(adapter.Log(), mark, Unauthorized)))
	if adapter.Exited() {
		s.Errorf("%s exited (code %d); a member credential must never stop it", adapter.Name(), adapter.ExitCode())
	}
	if mt, err := karmada.ScrapeMetrics(ctx, metricsURL); err == nil {
		if b == karmadacp.Patched {
			checkDashboard(s, adapter.Name(), mt)
			d := mt.MemberCredential(memberName).Sub(before)
			s.Notef("membercred counters of karmada-metrics-adapter over the rotation and restart: %s", d)
			// The adapter builds its member clients once per Cluster, so
			// only a 401 tells the shared token source of a rotation.
			if d.Recovered > 0 {
				s.Notef("path: member 401s replayed with the token re-read from the Secret (%v recovered)", d.Recovered)
			} else if d.Refreshes > 0 {
				s.Notef("path: the shared token source's periodic re-read found the new token before a 401")
			}
		}
		// client-go's request counter would count every 401, logged or
		// not; the adapter's legacyregistry may not carry it.
		if _, ok := mt[restClientRequests]; ok {
			s.Notef("karmada-metrics-adapter's %s{code=\"401\"} at the end: %.0f (%s)", restClientRequests, mt.Sum(restClientRequests, map[string]string{"code": "401"}), metricsURL)
		} else {
			s.Notef("karmada-metrics-adapter's /metrics has no %s; its 401s are counted from its log", restClientRequests)
		}
	} else {
		s.Errorf("scraping %s's %s: %v", adapter.Name(), metricsURL, err)
	}
	if lines := karmada.Lines(adapter.Log(), rotateMark, MemberTokenPickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	}

	switch {
	case len(broke) == 0 && b == karmadacp.Pristine:
		s.Outcome(e2ereport.Pass, "the pristine karmada-metrics-adapter served both Pods' metrics after the rotation: the scenario does not reproduce the bug")
	case len(broke) == 0:
		s.Outcome(e2ereport.Pass, "GREEN: after rotation, revocation and restart, Karmada's metrics.k8s.io served the metrics of the Pod created on %s afterwards and of the earlier one", memberName)
	case b == karmadacp.Pristine:
		s.Outcome(e2ereport.RedAsExpected, "RED at %s", strings.Join(broke, "; "))
	default:
		s.Outcome(e2ereport.Fail, "broke at %s", strings.Join(broke, "; "))
	}
}

func relative(t, ref time.Time) string {
	if t.Before(ref) {
		return fmt.Sprintf("%s before", ref.Sub(t).Round(time.Second))
	}
	return fmt.Sprintf("%s after", t.Sub(ref).Round(time.Second))
}

// createMemberPod creates MemberPod name on the member, as a user or a
// controller would.
func (e *env) createMemberPod(ctx context.Context, name string) error {
	if _, err := e.member.Kubernetes().CoreV1().Pods(workloadNamespace).Create(ctx, MemberPod(workloadNamespace, name), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Pod %s/%s on %s: %w", workloadNamespace, name, memberName, err)
	}
	return nil
}

// waitPodMetrics waits until Karmada's metrics.k8s.io serves Pod name's
// metrics relayed from the member (ServedFrom). With window (pristine),
// it also ends, returning an errBlindWindow, once window returns the
// refusal that closes it.
func waitPodMetrics(ctx context.Context, client metricsclient.Interface, name string, timeout time.Duration, window func() string) (time.Duration, error) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		pm, err := client.MetricsV1beta1().PodMetricses(workloadNamespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if err = ServedFrom(pm, workloadNamespace, name, memberName); err == nil {
				return time.Since(begin), nil
			}
		}
		last = err.Error()
		if window != nil {
			if refusal := window(); refusal != "" {
				return 0, errBlindWindow{fmt.Sprintf("Karmada did not serve PodMetrics %s/%s %s after karmada-metrics-adapter was refused by %s (%s); last: %s", workloadNamespace, name, blindSettle, memberName, refusal, last)}
			}
		}
		select {
		case <-ctx.Done():
			if window != nil {
				return 0, fmt.Errorf("inconclusive: PodMetrics %s/%s not served within %s, and no 401 logged that would say why (last: %s)", workloadNamespace, name, timeout, last)
			}
			return 0, fmt.Errorf("PodMetrics %s/%s not served through Karmada within %s (last: %s)", workloadNamespace, name, timeout, last)
		case <-time.After(poll):
		}
	}
}

// refusedWindow closes blindSettle after the first line matching re that
// log shows from mark on; it returns "" while open. When it first sees the
// line it marks s's first failure (s may be nil).
func refusedWindow(s *e2ereport.Run, log func() string, mark int, re *regexp.Regexp) func() string {
	var refusedAt time.Time
	var refusal string
	return func() string {
		if refusal == "" {
			if lines := karmada.Lines(log(), mark, re); len(lines) > 0 {
				refusal, refusedAt = lines[0], time.Now()
				if s != nil {
					s.MarkAt(e2ereport.EventFirstFailure, refusedAt)
				}
			}
			return ""
		}
		if time.Since(refusedAt) >= blindSettle {
			return refusal
		}
		return ""
	}
}
