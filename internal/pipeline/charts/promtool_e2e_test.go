//go:build e2e

package charts

import (
	"os"
	"os/exec"
	"path/filepath"
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
		"--values", valuesFile(t, `{"metrics":{"prometheusRule":{"enabled":true}}}`))
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
`)
}
