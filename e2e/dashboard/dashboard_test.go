package dashboard

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func parseScrape(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (cluster, reason) (rate(holdfast_member_credential_refresh_failures_total[$__rate_interval]))`: {"holdfast_member_credential_refresh_failures_total"},
		`time() - max by (cluster) (holdfast_member_credential_last_refresh_timestamp_seconds)`:                {"holdfast_member_credential_last_refresh_timestamp_seconds"},
		`max by (namespace, pod, state) (kubeslice_worker_hub_claim_state) == 1`:                               {"kubeslice_worker_hub_claim_state"},
		`increase(a_total{l="x}", m=~"by (y)"}[5m] offset 1h30m) > 0 and on (cluster) b == bool 1e3 unless c`:  {"a_total", "b", "c"},
		`a + a`: {"a"},
	} {
		if got := MetricNames(expr); !slices.Equal(got, want) {
			t.Errorf("MetricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

func TestParseLabels(t *testing.T) {
	qs, err := Parse([]byte(`{"panels":[{"title":"row","panels":[{"title":"p","targets":[
		{"refId":"A","expr":"sum by (cluster, reason) (rate(x_total{hub=\"a\", code!~\"2..\"}[5m]))","legendFormat":"{{ pod }} {{reason}}"},
		{"refId":"B","expr":""}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].Panel != "p" || qs[0].RefID != "A" || !slices.Equal(qs[0].Metrics, []string{"x_total"}) ||
		!slices.Equal(qs[0].Labels, []string{"cluster", "code", "hub", "pod", "reason"}) {
		t.Errorf("queries %+v", qs)
	}
	if _, err := Parse([]byte(`{"panels":[{"title":"empty"}]}`)); err == nil {
		t.Error("a dashboard without a query parsed")
	}
	if _, err := Parse([]byte(`{`)); err == nil {
		t.Error("broken JSON parsed")
	}
}

// The real dashboard: every query selects a metric, and each metric is one
// binary's, so a new panel on a family no Binary claims fails here before
// an e2e run would silently skip it.
func TestTheDashboardIsCovered(t *testing.T) {
	qs, err := Load(filepath.Join("..", "..", File))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if len(q.Metrics) == 0 {
			t.Errorf("panel %q query %s: no metric in %s", q.Panel, q.RefID, q.Expr)
		}
		for _, m := range q.Metrics {
			if !Karmada.serves(m) && !Worker.serves(m) && !KubeconfigFollower.serves(m) {
				t.Errorf("panel %q query %s: %s is no binary's (dashboard.Karmada, dashboard.Worker, dashboard.KubeconfigFollower)", q.Panel, q.RefID, m)
			}
		}
	}
	for _, b := range []Binary{Karmada, Worker, KubeconfigFollower} {
		for fam := range b.AfterEvent {
			if !b.serves(fam) {
				t.Errorf("%s: after-event family %s is not one of its prefixes", b.Name, fam)
			}
		}
	}
}

// karmadaScrape is what a patched controller-manager serves after a
// member's token was read and a 401 replayed: no refresh failure, no
// persisted 401.
const karmadaScrape = `# HELP holdfast_member_credential_refreshes_total Token reads.
# TYPE holdfast_member_credential_refreshes_total counter
holdfast_member_credential_refreshes_total{cluster="member1"} 3
# HELP holdfast_member_credential_last_refresh_timestamp_seconds Last read.
# TYPE holdfast_member_credential_last_refresh_timestamp_seconds gauge
holdfast_member_credential_last_refresh_timestamp_seconds{cluster="member1"} 1.7e9
# TYPE holdfast_member_credential_unauthorized_total counter
holdfast_member_credential_unauthorized_total{cluster="member1"} 1
# TYPE holdfast_member_credential_unauthorized_recovered_total counter
holdfast_member_credential_unauthorized_recovered_total{cluster="member1"} 1
# TYPE holdfast_own_credential_unauthorized_total counter
holdfast_own_credential_unauthorized_total 0
# TYPE holdfast_own_credential_unauthorized_recovered_total counter
holdfast_own_credential_unauthorized_recovered_total 0
# TYPE holdfast_own_credential_persisting_unauthorized gauge
holdfast_own_credential_persisting_unauthorized 0
# TYPE holdfast_own_credential_guard_tripped_total counter
holdfast_own_credential_guard_tripped_total 0
# TYPE go_goroutines gauge
go_goroutines 42
`

// workerScrape is a patched worker following two hubs.
const workerScrape = `# TYPE kubeslice_worker_hub_active gauge
kubeslice_worker_hub_active{hub="primary"} 1
kubeslice_worker_hub_active{hub="secondary"} 0
# TYPE kubeslice_worker_hub_credential_accepted gauge
kubeslice_worker_hub_credential_accepted{hub="secondary"} 1
# TYPE kubeslice_worker_hub_claim_state gauge
kubeslice_worker_hub_claim_state{state="claimed"} 1
kubeslice_worker_hub_claim_state{state="no_claim"} 0
# TYPE kubeslice_worker_hub_probe_errors_total counter
kubeslice_worker_hub_probe_errors_total{hub="primary",reason="timeout"} 0
kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="timeout"} 0
# TYPE kubeslice_worker_hub_switches_total counter
kubeslice_worker_hub_switches_total 0
# TYPE holdfast_own_credential_unauthorized_total counter
holdfast_own_credential_unauthorized_total 0
# TYPE holdfast_own_credential_unauthorized_recovered_total counter
holdfast_own_credential_unauthorized_recovered_total 0
# TYPE holdfast_own_credential_persisting_unauthorized gauge
holdfast_own_credential_persisting_unauthorized 0
# TYPE holdfast_own_credential_guard_tripped_total counter
holdfast_own_credential_guard_tripped_total 0
# TYPE holdfast_build_info gauge
holdfast_build_info{series_hash="0123456789ab",version="v1.6.4-holdfast.5"} 1
`

// The real dashboard against a scrape of each binary as the code serves
// it: nothing missing; the failure families not yet created are named as
// not checked, not as problems.
func TestCheckRealDashboard(t *testing.T) {
	qs, err := Load(filepath.Join("..", "..", File))
	if err != nil {
		t.Fatal(err)
	}
	r := Check(qs, parseScrape(t, karmadaScrape), Karmada)
	if len(r.Problems) > 0 {
		t.Errorf("Karmada: %q", r.Problems)
	}
	if len(r.NotYet) != 2 || !strings.HasPrefix(r.NotYet[0], "holdfast_member_credential_refresh_failures_total (after ") ||
		!strings.HasPrefix(r.NotYet[1], "holdfast_member_credential_unauthorized_persisted_total (after ") {
		t.Errorf("Karmada: not yet %q, want the refresh failures and the persisted 401s", r.NotYet)
	}
	if len(r.Checked) != 8 || slices.Contains(r.Checked, "go_goroutines") {
		t.Errorf("Karmada: checked %q, want the 8 families of the scrape the dashboard shows", r.Checked)
	}
	r = Check(qs, parseScrape(t, workerScrape), Worker)
	if len(r.Problems) > 0 || len(r.NotYet) > 0 || len(r.Checked) != 10 {
		t.Errorf("worker: %+v", r)
	}
}

// What the check exists for: a family the binary does not serve, a label
// renamed, a label on some series only. Each problem names the panel, the
// query and the name.
func TestCheckFindsWhatIsMissing(t *testing.T) {
	qs, err := Load(filepath.Join("..", "..", File))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, scrape string
		b            Binary
		want         []string
	}{
		{"family gone", strings.Replace(karmadaScrape, "holdfast_own_credential_guard_tripped_total 0\n", "", 1), Karmada,
			[]string{`panel "Guard trips" query A: holdfast_own_credential_guard_tripped_total is not in Karmada's /metrics`}},
		{"label renamed", strings.ReplaceAll(karmadaScrape, `{cluster="member1"} 3`, `{member="member1"} 3`), Karmada,
			[]string{`panel "Token reads from the member Secret" query A: label "cluster" is missing from 1 of the 1 series of holdfast_member_credential_refreshes_total in Karmada's /metrics (they carry member)`}},
		{"label on some series only", strings.Replace(workerScrape, `kubeslice_worker_hub_active{hub="secondary"} 0`, `kubeslice_worker_hub_active{slot="secondary"} 0`, 1), Worker,
			[]string{`panel "Active hub" query A: label "hub" is missing from 1 of the 2 series of kubeslice_worker_hub_active in worker-operator's /metrics (they carry hub, slot)`}},
		{"after-event family present, label wrong", karmadaScrape + "# TYPE holdfast_member_credential_refresh_failures_total counter\nholdfast_member_credential_refresh_failures_total{cluster=\"member1\"} 1\n", Karmada,
			[]string{`panel "Failed reads by reason" query A: label "reason" is missing from 1 of the 1 series of holdfast_member_credential_refresh_failures_total in Karmada's /metrics (they carry cluster)`}},
		{"nothing served", "", Worker, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(qs, parseScrape(t, tc.scrape), tc.b)
			if tc.want == nil {
				if len(r.Problems) < 8 {
					t.Errorf("an empty scrape gave %d problems: %q", len(r.Problems), r.Problems)
				}
				return
			}
			if !slices.Equal(r.Problems, tc.want) {
				t.Errorf("problems\n%q\nwant\n%q", r.Problems, tc.want)
			}
		})
	}
}
