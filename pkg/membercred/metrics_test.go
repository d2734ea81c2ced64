package membercred

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// exercise gives every metric at least one series.
func exercise(m *Metrics, clusters ...string) {
	for _, c := range clusters {
		m.refreshed(c, epoch)
		m.refreshFailed(c, ReasonNotFound)
		m.memberUnauthorized(c)
		m.memberRecovered(c)
		m.memberPersisted(c)
	}
	m.ownSawUnauthorized()
	m.ownRecovered()
	m.ownStreak(2)
	m.ownTripped()
}

func TestMetricsPassPromlint(t *testing.T) {
	m, reg := newTestMetrics(t)
	exercise(m, "member1")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 10 {
		t.Errorf("gathered %d metric families, want 10", len(mfs))
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "holdfast_member_credential_") && !strings.HasPrefix(name, "holdfast_own_credential_") {
			t.Errorf("metric %s lacks the holdfast_{member,own}_credential_ prefix", name)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

func TestMetricsForgetDeletesOneCluster(t *testing.T) {
	m, reg := newTestMetrics(t)
	exercise(m, "gone", "kept")
	m.Forget("gone")

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == "gone" {
					t.Errorf("%s still has a series for the forgotten cluster", mf.GetName())
				}
			}
		}
	}
	if got := testutil.ToFloat64(m.refreshes.WithLabelValues("kept")); got != 1 {
		t.Errorf("refreshes_total{cluster=kept} = %v, want 1", got)
	}
}

func TestLastRefreshIsUnixSeconds(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.refreshed("member1", epoch.Add(500*time.Millisecond))
	if got, want := testutil.ToFloat64(m.lastRefresh.WithLabelValues("member1")), float64(epoch.Unix())+0.5; got != want {
		t.Errorf("last_refresh_timestamp_seconds = %v, want %v", got, want)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	exercise(m, "member1") // must not panic
	m.Forget("member1")
}

func TestNewMetricsTwiceAdoptsCollectors(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a := MustNewMetrics(reg)
	b, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("second NewMetrics on one registry: %v", err)
	}
	a.refreshed("member1", epoch)
	b.refreshed("member1", epoch)
	if got := testutil.ToFloat64(a.refreshes.WithLabelValues("member1")); got != 2 {
		t.Errorf("refreshes_total = %v, want 2 (one shared series)", got)
	}
	if _, err := NewMetrics(nil); err == nil {
		t.Error("NewMetrics(nil) succeeded, want an error")
	}
}
