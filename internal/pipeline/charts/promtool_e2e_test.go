//go:build e2e

package charts

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// promtoolRules writes r's groups as a plain Prometheus rules file (what
// the prometheus-operator hands Prometheus) and returns its path.
func promtoolRules(t *testing.T, dir string, r prometheusRule) string {
	t.Helper()
	data, err := yaml.Marshal(map[string]interface{}{"groups": r.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runPromtoolTest runs `promtool test rules` on a unit-test file of
// synthetic series and expected alerts, against rulesFile.
func runPromtoolTest(t *testing.T, rulesFile, tests string) {
	t.Helper()
	promtool, err := toolcache.Ensure(t.Context(), repoRoot(t), toolcache.Promtool)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(rulesFile), "tests.yaml")
	if err := os.WriteFile(path, []byte(tests), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), promtool, "test", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// TestWorkerOperatorAlertsFireOnSyntheticSeries: the worker chart's alerts,
// as rendered, fire for what they say and stay quiet otherwise, judged by
// Prometheus's own rule evaluator (promtool test rules).
func TestWorkerOperatorAlertsFireOnSyntheticSeries(t *testing.T) {
	f := setup(t)
	objs := f.render(t, f.operator, workerNamespace, "--values", f.path(workerHA),
		"--values", valuesFile(t, `{"metrics":{"prometheusRule":{"enabled":true}},"ownCredentialGuard":{"action":"unhealthy"}}`))
	rules := promtoolRules(t, t.TempDir(), parseRule(t, objs["PrometheusRule/kubeslice-operator"]))
	runPromtoolTest(t, rules, `rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  # A released controller: no hub publishes a claim, for longer than 30m.
  - interval: 1m
    input_series:
      - series: 'kubeslice_worker_hub_claim_state{state="no_claim",pod="w-1"}'
        values: '1x40'
      - series: 'kubeslice_worker_hub_claim_state{state="claim",pod="w-2"}'
        values: '1x40'
      - series: 'kubeslice_worker_hub_claim_state{state="no_claim",pod="w-2"}'
        values: '0x40'
    alert_rule_test:
      - eval_time: 20m
        alertname: KubeSliceWorkerNoHubPublishesClaim
        exp_alerts: []
      - eval_time: 35m
        alertname: KubeSliceWorkerNoHubPublishesClaim
        exp_alerts:
          - exp_labels: {severity: warning, state: no_claim, pod: w-1}
            exp_annotations:
              summary: No hub publishes status.activeController; this worker cannot follow a hub failover
              description: Every released KubeSlice controller looks like this. The worker stays on its hub; a failover needs the manual switch of docs/hub-failover.md.
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#kubesliceworkernohubpublishesclaim
  # The Standby rejects the worker's credential for 15m.
  - interval: 1m
    input_series:
      - series: 'kubeslice_worker_hub_credential_accepted{hub="secondary"}'
        values: '1 0x20'
    alert_rule_test:
      - eval_time: 10m
        alertname: KubeSliceWorkerStandbyCredentialRejected
        exp_alerts: []
      - eval_time: 17m
        alertname: KubeSliceWorkerStandbyCredentialRejected
        exp_alerts:
          - exp_labels: {severity: warning, hub: secondary}
            exp_annotations:
              summary: Worker cannot authenticate to the Standby hub; it will not survive a failover
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#kubesliceworkerstandbycredentialrejected
  # One hub fails 5 probes a minute: 50 in 10m is a blip, 150 in 30m pages.
  - interval: 1m
    input_series:
      - series: 'kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unreachable",pod="w-1"}'
        values: '0+5x40'
      - series: 'kubeslice_worker_hub_probe_errors_total{hub="primary",reason="timeout",pod="w-1"}'
        values: '0+1x40'
    alert_rule_test:
      - eval_time: 10m
        alertname: KubeSliceWorkerHubUnreachable
        exp_alerts: []
      - eval_time: 35m
        alertname: KubeSliceWorkerHubUnreachable
        exp_alerts:
          - exp_labels: {severity: warning, hub: secondary}
            exp_annotations:
              summary: A hub has been unreachable from this worker for most of 30 minutes
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#kubesliceworkerhubunreachable
  # A rejected claim, counted once.
  - interval: 1m
    input_series:
      - series: 'kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="rejected_endpoint"}'
        values: '0 0 1 1 1'
    alert_rule_test:
      - eval_time: 4m
        alertname: KubeSliceWorkerHubClaimRejected
        exp_alerts:
          - exp_labels: {severity: warning, hub: secondary, reason: rejected_endpoint}
            exp_annotations:
              summary: A hub declares an Active endpoint this worker is not configured for
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#kubesliceworkerhubclaimrejected
  # The worker's own credential is rejected and stays rejected: with
  # action unhealthy the pod lives on, not Ready, and this must page.
  - interval: 1m
    input_series:
      - series: 'holdfast_own_credential_persisting_unauthorized{pod="w-1"}'
        values: '0 1 2 3 4 5x30'
      - series: 'holdfast_own_credential_persisting_unauthorized{pod="w-2"}'
        values: '0 1 0x30'
      - series: 'holdfast_own_credential_guard_tripped_total{pod="w-1"}'
        values: '0x5 1x30'
    alert_rule_test:
      - eval_time: 9m
        alertname: HoldfastWorkerOwnCredentialRejected
        exp_alerts: []
      - eval_time: 12m
        alertname: HoldfastWorkerOwnCredentialRejected
        exp_alerts:
          - exp_labels: {severity: warning, pod: w-1}
            exp_annotations:
              summary: The worker's own API server credential has been rejected for 10 minutes, even freshly re-read
              description: With ownCredentialGuard.action=unhealthy the pod is not Ready and reconciles nothing until a new credential is accepted; with exit it restarts.
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#holdfastworkerowncredentialrejected
      - eval_time: 5m
        alertname: HoldfastWorkerOwnCredentialGuardTripped
        exp_alerts: []
      - eval_time: 8m
        alertname: HoldfastWorkerOwnCredentialGuardTripped
        exp_alerts:
          - exp_labels: {severity: warning, pod: w-1}
            exp_annotations:
              summary: The worker's own-credential guard tripped (action unhealthy)
              description: Seen only when the process outlives the trip (action unhealthy, or a scrape before the exit).
              runbook_url: https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md#holdfastworkerowncredentialguardtripped
`)
}

// TestKarmadaAlertsFireOnSyntheticSeries: each alert of
// docs/alerts/karmada-prometheusrule.yaml fires once its condition has held
// for its for:, not before, and never for a single failure. The per-reason
// cases are generated from the file's own alerts, so a reason alert added
// there is tested without touching this test.
func TestKarmadaAlertsFireOnSyntheticSeries(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	r := parseRule(t, data)
	rules := promtoolRules(t, t.TempDir(), r)

	// expected renders what a case expects of one alert: its labels plus the
	// series' own, and its annotations with the series' labels filled in
	// (only cluster and reason are templated in the file).
	expected := func(alert string, labels map[string]string) string {
		for _, g := range r.Spec.Groups {
			for _, rule := range g.Rules {
				if rule.Alert != alert {
					continue
				}
				all := map[string]string{}
				maps.Copy(all, rule.Labels)
				maps.Copy(all, labels)
				ann := map[string]string{}
				for k, v := range rule.Annotations {
					v = strings.ReplaceAll(v, "{{ $labels.cluster }}", labels["cluster"])
					v = strings.ReplaceAll(v, "{{ $labels.kubeconfig }}", labels["kubeconfig"])
					ann[k] = strings.ReplaceAll(v, "{{ $labels.reason }}", labels["reason"])
				}
				out, err := yaml.Marshal([]map[string]any{{"exp_labels": all, "exp_annotations": ann}})
				if err != nil {
					t.Fatal(err)
				}
				return indent(string(out), "          ")
			}
		}
		t.Fatalf("no alert %s in %s", alert, KarmadaPrometheusRule)
		return ""
	}

	var tests strings.Builder
	tests.WriteString("rule_files: [rules.yaml]\nevaluation_interval: 1m\ntests:\n")
	// A Secret that stays broken fails every read, one every 5 minutes:
	// true from 5m on, firing at 5m + for: 15m = 20m. Another cluster fails
	// once at 6m and recovers: never.
	failing := "0x4"
	for i := 1; i <= 12; i++ {
		failing += fmt.Sprintf(" %dx4", i)
	}
	alerts := r.alerts()
	var tested []string
	for _, alert := range slices.Sorted(maps.Keys(alerts)) {
		reasons := reasonMatcher.FindAllStringSubmatch(alerts[alert], -1)
		if len(reasons) != 1 || reasons[0][1] != "=" {
			continue
		}
		reason := reasons[0][2]
		tested = append(tested, reason)
		fmt.Fprintf(&tests, `  - interval: 1m
    input_series:
      - series: 'holdfast_member_credential_refresh_failures_total{cluster="m1",reason="%[1]s"}'
        values: '%[2]s'
      - series: 'holdfast_member_credential_refresh_failures_total{cluster="m2",reason="%[1]s"}'
        values: '0x5 1x55'
    alert_rule_test:
      - eval_time: 19m
        alertname: %[3]s
        exp_alerts: []
      - eval_time: 21m
        alertname: %[3]s
        exp_alerts:
%[4]s`, reason, failing, alert, expected(alert, map[string]string{"cluster": "m1", "reason": reason}))
	}
	slices.Sort(tested)
	if want := slices.Sorted(slices.Values(memberFailureReasons(t))); !slices.Equal(tested, want) {
		t.Fatalf("reason alerts tested for %q, want one for each of %q", tested, want)
	}
	fmt.Fprintf(&tests, `  # Every request to m1 gets a persisting 401; m2 had one and recovered.
  - interval: 1m
    input_series:
      - series: 'holdfast_member_credential_unauthorized_persisted_total{cluster="m1"}'
        values: '0+3x40'
      - series: 'holdfast_member_credential_unauthorized_persisted_total{cluster="m2"}'
        values: '0x5 1x35'
    alert_rule_test:
      - eval_time: 14m
        alertname: KarmadaMemberCredentialRejected
        exp_alerts: []
      - eval_time: 17m
        alertname: KarmadaMemberCredentialRejected
        exp_alerts:
%s  # The controller-manager's own credential is rejected and stays so
  # (action unhealthy: the pod lives on, not Ready); the search pod's run
  # of strikes ends after a minute.
  - interval: 1m
    input_series:
      - series: 'holdfast_own_credential_persisting_unauthorized{pod="karmada-controller-manager-1"}'
        values: '0 1 2 3 4 5x30'
      - series: 'holdfast_own_credential_persisting_unauthorized{pod="karmada-search-1"}'
        values: '0 1 0x30'
      - series: 'holdfast_own_credential_guard_tripped_total{pod="karmada-controller-manager-1"}'
        values: '0x5 1x30'
    alert_rule_test:
      - eval_time: 9m
        alertname: KarmadaOwnCredentialRejected
        exp_alerts: []
      - eval_time: 12m
        alertname: KarmadaOwnCredentialRejected
        exp_alerts:
%s      - eval_time: 6m
        alertname: KarmadaOwnCredentialGuardTripped
        exp_alerts: []
      - eval_time: 8m
        alertname: KarmadaOwnCredentialGuardTripped
        exp_alerts:
%s  # An estimator's member kubeconfig turns bad at 2m and stays so; an
  # agent's is bad for 5 minutes and fixed. Every request of the estimator
  # gets a persisting 401 from 5m on; the agent had one and recovered.
  - interval: 1m
    input_series:
      - series: 'holdfast_kubeconfig_credential_usable{kubeconfig="member1"}'
        values: '1 1 0x40'
      - series: 'holdfast_kubeconfig_credential_usable{kubeconfig="karmada-apiserver"}'
        values: '1 0x5 1x30'
      - series: 'holdfast_kubeconfig_credential_unauthorized_persisted_total{kubeconfig="member1"}'
        values: '0x5 0+2x40'
      - series: 'holdfast_kubeconfig_credential_unauthorized_persisted_total{kubeconfig="karmada-apiserver"}'
        values: '0x5 1x35'
    alert_rule_test:
      - eval_time: 16m
        alertname: KarmadaKubeconfigCredentialUnusable
        exp_alerts: []
      - eval_time: 18m
        alertname: KarmadaKubeconfigCredentialUnusable
        exp_alerts:
%s      - eval_time: 19m
        alertname: KarmadaKubeconfigCredentialRejected
        exp_alerts: []
      - eval_time: 23m
        alertname: KarmadaKubeconfigCredentialRejected
        exp_alerts:
%s`,
		expected("KarmadaMemberCredentialRejected", map[string]string{"cluster": "m1"}),
		expected("KarmadaOwnCredentialRejected", map[string]string{"pod": "karmada-controller-manager-1"}),
		expected("KarmadaOwnCredentialGuardTripped", map[string]string{"pod": "karmada-controller-manager-1"}),
		expected("KarmadaKubeconfigCredentialUnusable", map[string]string{"kubeconfig": "member1"}),
		expected("KarmadaKubeconfigCredentialRejected", map[string]string{"kubeconfig": "member1"}))
	runPromtoolTest(t, rules, tests.String())
}

// indent prefixes every line of s with prefix.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
