//go:build e2e

package charts

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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

// TestKarmadaChartPrometheusRule: the Karmada chart renders nothing by
// default (the default manifests stay upstream's but for the images) and,
// enabled, the rules of docs/alerts/karmada-prometheusrule.yaml exactly:
// same groups, alerts, expressions, for: and annotations, with only the
// severity and the runbook base URL taken from the values. Users of the
// chart and of the file then get the same pages, and the file's own tests
// (runbooks, reasons, promtool) cover the chart too. The summaries carry
// Prometheus's own {{ $labels.cluster }}, so the comparison also catches a
// template that lets helm eat it.
func TestKarmadaChartPrometheusRule(t *testing.T) {
	f := setup(t)
	for name := range f.render(t, f.karmada, karmadaNamespace) {
		if strings.HasPrefix(name, "PrometheusRule/") {
			t.Errorf("%s rendered by default", name)
		}
	}
	docs, err := os.ReadFile(filepath.Join(f.root, KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, values, base string }{
		{"default runbooks", `{"holdfast":{"prometheusRule":{"enabled":true,"severity":"critical","labels":{"prometheus":"main"}}}}`, RunbookBaseURL},
		{"own runbooks", `{"holdfast":{"prometheusRule":{"enabled":true,"severity":"critical","labels":{"prometheus":"main"},"runbookBaseURL":"https://wiki.example.com/holdfast/runbooks"}}}`, "https://wiki.example.com/holdfast/runbooks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := f.render(t, f.karmada, karmadaNamespace, "--values", valuesFile(t, tc.values))
			var doc []byte
			for name, d := range objs {
				if strings.HasPrefix(name, "PrometheusRule/") {
					if doc != nil {
						t.Errorf("more than one PrometheusRule rendered (have %s)", objs.names())
					}
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

			// The file as the chart should render it with these values.
			want := parseRule(t, docs)
			for gi, g := range want.Spec.Groups {
				for ri, rule := range g.Rules {
					if rule.Labels["severity"] == "" {
						t.Fatalf("%s: %s has no severity label to replace", rule.Alert, KarmadaPrometheusRule)
					}
					rule.Labels["severity"] = "critical"
					url, ok := strings.CutPrefix(rule.Annotations["runbook_url"], RunbookBaseURL+"#")
					if !ok {
						t.Fatalf("%s: %s's runbook_url %q is not under %s", rule.Alert, KarmadaPrometheusRule, rule.Annotations["runbook_url"], RunbookBaseURL)
					}
					rule.Annotations["runbook_url"] = tc.base + "#" + url
					want.Spec.Groups[gi].Rules[ri] = rule
				}
			}
			if !reflect.DeepEqual(r.Spec, want.Spec) {
				got, _ := yaml.Marshal(r.Spec)
				exp, _ := yaml.Marshal(want.Spec)
				t.Errorf("chart's rules differ from %s's:\n--- chart\n%s\n--- want\n%s", KarmadaPrometheusRule, got, exp)
			}
			checkExported(t, r, membercredMetrics(t))
		})
	}

	// A base with a fragment would make every runbook_url link nowhere.
	out, err := f.helm.Run(t.Context(), "template", "rel", f.karmada.Path, "--namespace", karmadaNamespace, "--values",
		valuesFile(t, `{"holdfast":{"prometheusRule":{"enabled":true,"runbookBaseURL":"https://wiki.example.com/runbooks#top"}}}`))
	if want := `holdfast.prometheusRule.runbookBaseURL "https://wiki.example.com/runbooks#top": want a URL without a #fragment`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("runbookBaseURL with a #fragment: error %v (output %.400s); want one saying %q", err, out, want)
	}
}
