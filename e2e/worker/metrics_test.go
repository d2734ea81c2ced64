package worker

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	const exposition = `# HELP kubeslice_worker_hub_active 1 for the hub this worker process connected to, 0 for the other.
# TYPE kubeslice_worker_hub_active gauge
kubeslice_worker_hub_active{hub="primary"} 1
kubeslice_worker_hub_active{hub="secondary"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unauthorized"} 3
kubeslice_worker_hub_switches_total 0
weird_label{v="a b} c"} 7 1700000000000
not a sample
`
	m, err := parseMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		series string
		want   float64
		found  bool
	}{
		{`kubeslice_worker_hub_active{hub="primary"}`, 1, true},
		{`kubeslice_worker_hub_active{hub="secondary"}`, 0, true},
		{`kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unauthorized"}`, 3, true},
		{`kubeslice_worker_hub_switches_total`, 0, true},
		{`weird_label{v="a b} c"}`, 7, true},
		{`kubeslice_worker_hub_credential_accepted{hub="secondary"}`, 0, false},
	}
	for _, tc := range tests {
		got, found := m.value(tc.series)
		if got != tc.want || found != tc.found {
			t.Errorf("value(%s) = %v, %v; want %v, %v", tc.series, got, found, tc.want, tc.found)
		}
	}
	if got := m.withPrefix("kubeslice_worker_hub_active"); len(got) != 2 {
		t.Errorf("withPrefix found %v, want the two kubeslice_worker_hub_active series", got)
	}
}
