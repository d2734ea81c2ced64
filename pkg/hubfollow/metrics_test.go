package hubfollow

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsPassPromlint(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.switches.Inc()
	m.setActive(PrimaryName)
	m.observeProbe(failed(SecondaryName, ProbeUnauthorized))
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	want := []string{metricActive, metricClaimState, metricCredentialAccepted, metricProbeErrors, metricSwitches}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("registered %v, want %v", names, want)
	}
}

// The upstream names are a contract with dashboards and alerts.
func TestMetricNamesKeepUpstreamContract(t *testing.T) {
	if metricSwitches != "kubeslice_worker_hub_switches_total" || metricProbeErrors != "kubeslice_worker_hub_probe_errors_total" {
		t.Errorf("upstream metric renamed: %s, %s", metricSwitches, metricProbeErrors)
	}
}

func TestProbeErrorSeriesExistBeforeAnyError(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	const want = `
# HELP kubeslice_worker_hub_probe_errors_total Reads of the worker's Cluster CR on a hub that produced no usable answer, by hub slot and reason.
# TYPE kubeslice_worker_hub_probe_errors_total counter
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="credential_unavailable"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="forbidden"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="malformed"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="not_found"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="rejected_endpoint"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="timeout"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="unauthorized"} 0
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="unreachable"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="credential_unavailable"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="forbidden"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="malformed"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="not_found"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="rejected_endpoint"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="timeout"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unauthorized"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unreachable"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), metricProbeErrors); err != nil {
		t.Error(err)
	}
}

func TestCredentialAcceptedGauge(t *testing.T) {
	tests := []struct {
		name          string
		answers       []ProbeResult // in order, for the secondary
		want          float64
		wantSeriesSet bool
	}{
		{name: "unknown until a probe reaches the hub", answers: []ProbeResult{failed(SecondaryName, ProbeUnreachable), failed(SecondaryName, ProbeTimeout)}},
		{name: "accepted on a claim", answers: []ProbeResult{claimed(SecondaryName, "hub-b", endpointB, t1)}, want: 1, wantSeriesSet: true},
		{name: "accepted when nothing is published", answers: []ProbeResult{nothing(SecondaryName)}, want: 1, wantSeriesSet: true},
		{name: "accepted on 404 (authorized, just missing)", answers: []ProbeResult{failed(SecondaryName, ProbeNotFound)}, want: 1, wantSeriesSet: true},
		{name: "rejected on 401", answers: []ProbeResult{nothing(SecondaryName), failed(SecondaryName, ProbeUnauthorized)}, want: 0, wantSeriesSet: true},
		{name: "rejected on 403", answers: []ProbeResult{failed(SecondaryName, ProbeForbidden)}, want: 0, wantSeriesSet: true},
		{name: "rejected when it cannot be loaded", answers: []ProbeResult{failed(SecondaryName, ProbeCredentialUnavailable)}, want: 0, wantSeriesSet: true},
		{name: "an outage keeps the last verdict", answers: []ProbeResult{failed(SecondaryName, ProbeUnauthorized), failed(SecondaryName, ProbeUnreachable)}, want: 0, wantSeriesSet: true},
		{name: "an outage keeps the last good verdict", answers: []ProbeResult{nothing(SecondaryName), failed(SecondaryName, ProbeTimeout)}, want: 1, wantSeriesSet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := newMetrics(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tt.answers {
				m.observeProbe(a)
			}
			if n := testutil.CollectAndCount(m.credentialAccepted); (n == 1) != tt.wantSeriesSet {
				t.Fatalf("%d series, want set=%v", n, tt.wantSeriesSet)
			}
			if tt.wantSeriesSet {
				if got := testutil.ToFloat64(m.credentialAccepted.WithLabelValues(SecondaryName)); got != tt.want {
					t.Errorf("%s{hub=secondary} = %v, want %v", metricCredentialAccepted, got, tt.want)
				}
			}
		})
	}
}

func TestProbeErrorsCountedByHubAndReason(t *testing.T) {
	m, err := newMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &Follower{metrics: m, lastSeen: map[string]string{}}
	pair := testPair(t)
	for _, results := range [][]ProbeResult{
		{failed(PrimaryName, ProbeUnauthorized), claimed(SecondaryName, "evil", "https://evil.example.com", t1)},
		{failed(PrimaryName, ProbeUnauthorized), failed(SecondaryName, ProbeTimeout)},
		{nothing(PrimaryName), claimed(SecondaryName, "hub-b", endpointB, t1)},
	} {
		f.record(results, elect(pair, results))
	}
	for _, c := range []struct {
		hub, reason string
		want        float64
	}{
		{PrimaryName, "unauthorized", 2},
		{SecondaryName, "rejected_endpoint", 1},
		{SecondaryName, "timeout", 1},
		{PrimaryName, "unreachable", 0},
		{SecondaryName, "unauthorized", 0},
	} {
		if got := testutil.ToFloat64(m.probeErrors.WithLabelValues(c.hub, c.reason)); got != c.want {
			t.Errorf("%s{hub=%q,reason=%q} = %v, want %v", metricProbeErrors, c.hub, c.reason, got, c.want)
		}
	}
}

// A worker that calls Start twice in one process (or tests sharing a
// registry) reuses the registered collectors instead of failing.
func TestMetricsReuseAnExistingRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := newMetrics(reg)
	if err != nil {
		t.Fatalf("second registration: %v", err)
	}
	second.switches.Inc()
	if got := testutil.ToFloat64(first.switches); got != 1 {
		t.Errorf("the second metrics do not share the registered counter (first sees %v)", got)
	}
}
