//go:build e2e

package charts

import (
	"strings"
	"testing"
)

// TestWorkerOperatorRejectsBadValues feeds one bad value at a time on top
// of the HA values and checks that helm refuses to render, with a message
// that names the value and what is wrong with it: values.schema.json for
// single values, templates/_validate.tpl for what a schema cannot see.
func TestWorkerOperatorRejectsBadValues(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		name      string
		set       string // JSON values on top of ci/ha-values.yaml
		namespace string // default kubeslice-system
		primary   bool   // start from ci/primary-values.yaml instead
		alone     bool   // set is all the values
		want      string
	}{
		{name: "no cluster name", alone: true, want: "at '': missing property 'clusterName'",
			set: `{"hub":{"projectNamespace":"p","primary":{"endpoint":"https://hub-a.example.com","secretName":"a"}}}`},
		{name: "no primary Secret", alone: true, want: "at '/hub/primary': missing property 'secretName'",
			set: `{"clusterName":"w","hub":{"projectNamespace":"p","primary":{"endpoint":"https://hub-a.example.com"}}}`},
		{name: "cluster name unset with null", set: `{"clusterName":null}`, want: "at '/clusterName': got null, want string"},
		{name: "secondary endpoint without a Secret", primary: true, set: `{"hub":{"secondary":{"endpoint":"https://hub-b.example.com:6443"}}}`,
			want: "at '/hub/secondary': missing property 'secretName'"},
		{name: "plain-http primary", set: `{"hub":{"primary":{"endpoint":"http://hub-a.example.com:6443"}}}`,
			want: "at '/hub/primary/endpoint': 'http://hub-a.example.com:6443' does not match pattern '^https://"},
		{name: "plain-http secondary", set: `{"hub":{"secondary":{"endpoint":"http://hub-b.example.com"}}}`,
			want: "at '/hub/secondary/endpoint': 'http://hub-b.example.com' does not match pattern '^https://"},
		{name: "endpoint with userinfo", set: `{"hub":{"secondary":{"endpoint":"https://worker@hub-b.example.com"}}}`,
			want: "at '/hub/secondary/endpoint':"},
		{name: "bad Secret name", set: `{"hub":{"secondary":{"secretName":"Hub_B"}}}`, want: "at '/hub/secondary/secretName': 'Hub_B' does not match pattern"},
		{name: "duration without a unit", set: `{"hub":{"resolveInterval":"10"}}`,
			want: "at '/hub/resolveInterval': '10' does not match pattern '^[1-9][0-9]*(ms|s|m|h)$'"},
		{name: "zero duration", set: `{"hub":{"resolveTimeout":"0s"}}`, want: "at '/hub/resolveTimeout': '0s' does not match pattern"},
		{name: "negative duration", set: `{"ownCredentialGuard":{"window":"-5m"}}`, want: "at '/ownCredentialGuard/window': '-5m' does not match pattern"},
		{name: "min duration without a unit", set: `{"ownCredentialGuard":{"minDuration":"60"}}`, want: "at '/ownCredentialGuard/minDuration': '60' does not match pattern"},
		{name: "duration as a number", set: `{"hub":{"resolveInterval":10}}`, want: "at '/hub/resolveInterval': got number, want string"},
		{name: "no confirmations", set: `{"hub":{"switchConfirmations":0}}`, want: "at '/hub/switchConfirmations': minimum: got 0, want 1"},
		{name: "confirmations as text", set: `{"hub":{"switchConfirmations":"2"}}`, want: "at '/hub/switchConfirmations': got string, want integer"},
		{name: "unknown guard action", set: `{"ownCredentialGuard":{"action":"restart"}}`,
			want: "at '/ownCredentialGuard/action': value must be one of 'exit', 'unhealthy', 'off'"},
		{name: "guard threshold zero", set: `{"ownCredentialGuard":{"threshold":0}}`, want: "at '/ownCredentialGuard/threshold': minimum: got 0, want 1"},
		{name: "misspelt value", set: `{"hub":{"secondary":{"endpiont":"https://hub-b.example.com"}}}`,
			want: "at '/hub/secondary': additional properties 'endpiont' not allowed"},
		{name: "two replicas without leader election", set: `{"replicaCount":2,"leaderElection":false}`, want: "at '/leaderElection': value must be true"},
		{name: "ServiceMonitor without its Service", set: `{"metrics":{"service":{"enabled":false},"serviceMonitor":{"enabled":true}}}`,
			want: "at '/metrics/service/enabled': value must be true"},
		{name: "PrometheusRule switch as text", set: `{"metrics":{"prometheusRule":{"enabled":"yes"}}}`,
			want: "at '/metrics/prometheusRule/enabled': got string, want boolean"},
		{name: "misspelt PrometheusRule value", set: `{"metrics":{"prometheusRule":{"enable":true}}}`,
			want: "at '/metrics/prometheusRule': additional properties 'enable' not allowed"},
		{name: "PrometheusRule severity with a space", set: `{"metrics":{"prometheusRule":{"enabled":true,"severity":"very bad"}}}`,
			want: "at '/metrics/prometheusRule/severity': 'very bad' does not match pattern"},
		{name: "PrometheusRule label not a string", set: `{"metrics":{"prometheusRule":{"labels":{"prometheus":1}}}}`,
			want: "at '/metrics/prometheusRule/labels/prometheus': got number, want string"},
		{name: "runbook base with a fragment", set: `{"metrics":{"prometheusRule":{"runbookBaseURL":"https://wiki.example.com/runbooks#top"}}}`,
			want: "at '/metrics/prometheusRule/runbookBaseURL': 'https://wiki.example.com/runbooks#top' does not match pattern"},
		{name: "dashboard namespace no DNS label", set: `{"metrics":{"grafanaDashboard":{"enabled":true,"namespace":"Monitoring"}}}`,
			want: "at '/metrics/grafanaDashboard/namespace': 'Monitoring' does not match pattern"},
		// templates/_validate.tpl
		{name: "another namespace", namespace: "default",
			want: `install into namespace kubeslice-system (helm --namespace kubeslice-system --create-namespace), not "default"`},
		{name: "secondary names the primary", set: `{"hub":{"secondary":{"endpoint":"https://HUB-A.example.com:6443/"}}}`,
			want: `hub.secondary.endpoint "https://HUB-A.example.com:6443/" names the same hub as hub.primary.endpoint`},
		{name: "extraEnv overrides a chart variable", set: `{"extraEnv":[{"name":"HUB_SECONDARY_HOST_ENDPOINT","value":"https://x.example.com"}]}`,
			want: "extraEnv sets HUB_SECONDARY_HOST_ENDPOINT, which the chart sets from hub.secondary.endpoint: set that value instead"},
		{name: "extraEnv turns webhooks on", set: `{"extraEnv":[{"name":"ENABLE_WEBHOOKS","value":"true"}]}`,
			want: `extraEnv sets ENABLE_WEBHOOKS, which the chart sets to "false"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := workerHA
			if tc.primary {
				values = workerPrimary
			}
			ns := tc.namespace
			if ns == "" {
				ns = workerNamespace
			}
			args := []string{"template", "rel", f.operator.Path, "--namespace", ns}
			if !tc.alone {
				args = append(args, "--values", f.path(values))
			}
			if tc.set != "" {
				args = append(args, "--values", valuesFile(t, tc.set))
			}
			out, err := f.helm.Run(t.Context(), args...)
			if err == nil {
				t.Fatalf("helm rendered bad values %s:\n%.400s", tc.set, out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say %q:\n%v", tc.want, err)
			}
		})
	}
}

// TestKarmadaChartRejectsBadGuardValues: a controllerManager.ownCredentialGuard
// value karmada-controller-manager refuses at start must fail helm, naming the
// value and what is accepted (the patched chart's holdfast-values-check.yaml),
// instead of rendering a pod that crash-loops; the values the binary takes
// still render.
func TestKarmadaChartRejectsBadGuardValues(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct{ set, want string }{
		{"action=exti", `controllerManager.ownCredentialGuard.action "exti": want exit, unhealthy or off`},
		{"threshold=-1", "controllerManager.ownCredentialGuard.threshold -1: want a whole number of persisting 401s, at least 1"},
		{"threshold=1.5", "controllerManager.ownCredentialGuard.threshold 1.5: want a whole number"},
		{"threshold=five", "controllerManager.ownCredentialGuard.threshold five: want a whole number"},
		{"window=300", `controllerManager.ownCredentialGuard.window "300": want a Go duration such as 90s or 5m`}, // a number: --set reads 300 as one
		{"minDuration=1 minute", `controllerManager.ownCredentialGuard.minDuration "1 minute": want a Go duration such as 1m, or none`},
	} {
		t.Run(tc.set, func(t *testing.T) {
			out, err := f.helm.Run(t.Context(), "template", "rel", f.karmada.Path, "--namespace", karmadaNamespace,
				"--set", "controllerManager.ownCredentialGuard."+tc.set)
			if err == nil {
				t.Fatalf("helm rendered controllerManager.ownCredentialGuard.%s:\n%.400s", tc.set, out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say %q:\n%v", tc.want, err)
			}
		})
	}
	for _, set := range []string{"action=exit", "action=unhealthy", "action=off", "threshold=1", "window=1h30m", "minDuration=none", "minDuration=30s"} {
		t.Run("accepts "+set, func(t *testing.T) {
			f.render(t, f.karmada, karmadaNamespace, "--set", "controllerManager.ownCredentialGuard."+set)
		})
	}
}
