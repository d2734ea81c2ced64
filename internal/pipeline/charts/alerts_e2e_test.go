//go:build e2e

package charts

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWorkerOperatorPrometheusRule: off by default (nothing a user did not
// ask for, and no dependency on the prometheus-operator CRDs); on, one
// PrometheusRule with the alerts of docs/hub-failover.md, every metric of
// which pkg/hubfollow registers.
func TestWorkerOperatorPrometheusRule(t *testing.T) {
	f := setup(t)
	for _, values := range []string{workerPrimary, workerHA} {
		objs := f.render(t, f.operator, workerNamespace, "--values", f.path(values))
		for name := range objs {
			if strings.HasPrefix(name, "PrometheusRule/") {
				t.Errorf("%s: %s rendered by default", values, name)
			}
		}
	}

	objs := f.render(t, f.operator, workerNamespace, "--values", f.path(workerHA),
		"--values", valuesFile(t, `{"metrics":{"prometheusRule":{"enabled":true,"severity":"critical","labels":{"prometheus":"main"}}}}`))
	doc, ok := objs["PrometheusRule/kubeslice-operator"]
	if !ok {
		t.Fatalf("no PrometheusRule/kubeslice-operator rendered (have %s)", objs.names())
	}
	r := parseRule(t, doc)
	if r.Metadata.Namespace != workerNamespace || r.Metadata.Labels["prometheus"] != "main" {
		t.Errorf("metadata %+v, want namespace %s and the label prometheus=main", r.Metadata, workerNamespace)
	}
	want := map[string]string{
		"KubeSliceWorkerStandbyCredentialRejected": `kubeslice_worker_hub_credential_accepted{hub="secondary"} == 0`,
		"KubeSliceWorkerHubUnreachable":            `sum by (hub) (increase(kubeslice_worker_hub_probe_errors_total{reason=~"unreachable|timeout"}[30m])) > 100`,
		"KubeSliceWorkerHubClaimRejected":          `increase(kubeslice_worker_hub_probe_errors_total{reason="rejected_endpoint"}[1h]) > 0`,
		"KubeSliceWorkerNoHubPublishesClaim":       `kubeslice_worker_hub_claim_state{state="no_claim"} == 1`,
		"HoldfastWorkerOwnCredentialRejected":      `holdfast_own_credential_persisting_unauthorized > 0`,
		"HoldfastWorkerOwnCredentialGuardTripped":  `increase(holdfast_own_credential_guard_tripped_total[30m]) > 0`,
	}
	if got := r.alerts(); !maps.Equal(got, want) {
		t.Errorf("alerts\n  %q\nwant docs/hub-failover.md's\n  %q", got, want)
	}
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Labels["severity"] != "critical" || rule.Annotations["summary"] == "" {
				t.Errorf("%s: labels %v, annotations %v; want severity critical and a summary", rule.Alert, rule.Labels, rule.Annotations)
			}
		}
	}
	checkExported(t, r, append(hubfollowMetrics(t), membercredMetrics(t)...))
}

// TestKarmadaChartPrometheusRule: the Karmada chart renders its two
// alerts when asked, and nothing by default (the default manifests stay
// upstream's but for the images). They are what patch 0003 carries: the
// per-reason alerts of docs/alerts/karmada-prometheusrule.yaml reach the
// chart only with a new revision of that patch, so until then the test
// pins the chart's own two, the one they share must not drift from the
// file, and each has a runbook.
func TestKarmadaChartPrometheusRule(t *testing.T) {
	f := setup(t)
	for name := range f.render(t, f.karmada, karmadaNamespace) {
		if strings.HasPrefix(name, "PrometheusRule/") {
			t.Errorf("%s rendered by default", name)
		}
	}
	objs := f.render(t, f.karmada, karmadaNamespace,
		"--values", valuesFile(t, `{"holdfast":{"prometheusRule":{"enabled":true,"severity":"critical","labels":{"prometheus":"main"}}}}`))
	var doc []byte
	for name, d := range objs {
		if strings.HasPrefix(name, "PrometheusRule/") {
			doc = d
		}
	}
	if doc == nil {
		t.Fatalf("no PrometheusRule rendered (have %s)", objs.names())
	}
	r := parseRule(t, doc)
	if r.Metadata.Namespace != karmadaNamespace || r.Metadata.Labels["prometheus"] != "main" {
		t.Errorf("metadata %+v, want namespace %s and the label prometheus=main", r.Metadata, karmadaNamespace)
	}
	want := map[string]string{
		"KarmadaMemberCredentialRejected":   "increase(holdfast_member_credential_unauthorized_persisted_total[10m]) > 0",
		"KarmadaMemberCredentialUnreadable": "increase(holdfast_member_credential_refresh_failures_total[15m]) > 0",
	}
	got := r.alerts()
	if !maps.Equal(got, want) {
		t.Errorf("chart alerts\n  %q\nwant patch 0003's\n  %q", got, want)
	}
	docs, err := os.ReadFile(filepath.Join(f.root, KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(t)
	for name, expr := range got {
		if d, ok := parseRule(t, docs).alerts()[name]; ok && d != expr {
			t.Errorf("%s: chart expr %q, %s's %q", name, expr, KarmadaPrometheusRule, d)
		}
		if !slices.Contains(sections, name) {
			t.Errorf("%s: docs/runbooks.md has no section %q", name, "## "+name)
		}
	}
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Labels["severity"] != "critical" || !strings.Contains(rule.Annotations["summary"], "{{ $labels.cluster }}") {
				t.Errorf("%s: labels %v, annotations %v; want severity critical and a summary templated by Prometheus", rule.Alert, rule.Labels, rule.Annotations)
			}
		}
	}
	checkExported(t, r, membercredMetrics(t))
}
