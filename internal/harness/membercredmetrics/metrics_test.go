package membercredmetrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const exposition = `# HELP holdfast_member_credential_unauthorized_total Requests carrying the member cluster's Secret token that got 401 Unauthorized.
# TYPE holdfast_member_credential_unauthorized_total counter
holdfast_member_credential_unauthorized_total{cluster="member1"} 3
holdfast_member_credential_unauthorized_total{cluster="member2"} 4
# HELP holdfast_member_credential_refresh_failures_total Reads of a member cluster's Secret that yielded no usable token.
# TYPE holdfast_member_credential_refresh_failures_total counter
holdfast_member_credential_refresh_failures_total{cluster="member1",reason="empty"} 1
holdfast_member_credential_refresh_failures_total{cluster="member1",reason="missing"} 2
# HELP holdfast_own_credential_persisting_unauthorized Current run.
# TYPE holdfast_own_credential_persisting_unauthorized gauge
holdfast_own_credential_persisting_unauthorized 5
`

func TestMetricsSum(t *testing.T) {
	m, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		family string
		match  map[string]string
		want   float64
	}{
		{name: "one cluster", family: Unauthorized, match: map[string]string{"cluster": "member1"}, want: 3},
		{name: "all clusters", family: Unauthorized, want: 7},
		{name: "over another label", family: "holdfast_member_credential_refresh_failures_total", match: map[string]string{"cluster": "member1"}, want: 3},
		{name: "two labels", family: "holdfast_member_credential_refresh_failures_total", match: map[string]string{"cluster": "member1", "reason": "empty"}, want: 1},
		{name: "unknown cluster", family: Unauthorized, match: map[string]string{"cluster": "member3"}, want: 0},
		{name: "label the family lacks", family: Unauthorized, match: map[string]string{"reason": "empty"}, want: 0},
		{name: "gauge", family: "holdfast_own_credential_persisting_unauthorized", want: 5},
		{name: "missing family counts nothing", family: OwnGuardTripped, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Sum(tt.family, tt.match); got != tt.want {
				t.Errorf("Sum(%s, %v) = %v, want %v", tt.family, tt.match, got, tt.want)
			}
		})
	}
}

func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, exposition)
	}))
	defer srv.Close()

	m, err := Scrape(context.Background(), nil, srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sum(Unauthorized, nil); got != 7 {
		t.Errorf("scraped %s = %v, want 7", Unauthorized, got)
	}
	if _, err := Scrape(context.Background(), nil, srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Scrape(/nope) error = %v, want the 404 named", err)
	}
}

func TestMemberCredential(t *testing.T) {
	m, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	got := m.MemberCredential("member1")
	want := MemberCredential{Unauthorized: 3, RefreshFailures: 3}
	if got != want {
		t.Errorf("MemberCredential(member1) = %+v, want %+v", got, want)
	}
	if d := got.Sub(MemberCredential{Unauthorized: 1, RefreshFailures: 3}); d != (MemberCredential{Unauthorized: 2}) {
		t.Errorf("Sub = %+v, want only unauthorized 2", d)
	}
	if s := got.String(); !strings.Contains(s, "unauthorized 3") || !strings.Contains(s, "refresh failures 3") {
		t.Errorf("String() = %q", s)
	}
	if z := Metrics(nil).MemberCredential("member1"); z != (MemberCredential{}) {
		t.Errorf("a binary without membercred = %+v, want zero", z)
	}
}

func TestHasMemberCredential(t *testing.T) {
	m, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for cluster, want := range map[string]bool{"member1": true, "member2": true, "member3": false} {
		if got := m.HasMemberCredential(cluster); got != want {
			t.Errorf("HasMemberCredential(%s) = %v, want %v", cluster, got, want)
		}
	}
	// A source that has counted nothing yet has its gauge.
	fresh, err := Parse(strings.NewReader("# TYPE " + LastRefresh + " gauge\n" + LastRefresh + "{cluster=\"member2\"} 1.7e9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !fresh.HasMemberCredential("member2") || fresh.MemberCredential("member2") != (MemberCredential{}) {
		t.Errorf("a fresh token source: HasMemberCredential = %v, counters %+v; want served, all zero", fresh.HasMemberCredential("member2"), fresh.MemberCredential("member2"))
	}
	// A binary serving other families only (a pristine one) has none.
	other, err := Parse(strings.NewReader("# TYPE workqueue_adds_total counter\nworkqueue_adds_total{name=\"cluster\"} 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if other.HasMemberCredential("member1") {
		t.Error("a scrape without membercred families has member1's counters")
	}
}

func TestChange(t *testing.T) {
	for _, tc := range []struct {
		c    MemberCredential
		want string
	}{
		{MemberCredential{Refreshes: 1}, "refreshes +1, unauthorized +0, recovered +0, persisted +0"},
		{MemberCredential{Unauthorized: 2, Recovered: 2}, "refreshes +0, unauthorized +2, recovered +2, persisted +0"},
		{MemberCredential{Persisted: 3, RefreshFailures: 1}, "refreshes +0, unauthorized +0, recovered +0, persisted +3, refresh failures +1"},
		// A counter that went down (a restarted binary) shows as such.
		{MemberCredential{Refreshes: -4}, "refreshes -4, unauthorized +0, recovered +0, persisted +0"},
	} {
		if got := tc.c.Change(); got != tc.want {
			t.Errorf("%+v.Change() = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestScrapeNamesTheStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"", http.StatusForbidden)
	}))
	defer srv.Close()
	_, err := Scrape(context.Background(), srv.Client(), srv.URL+"/metrics")
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "cannot get path") {
		t.Errorf("Scrape of a refusing endpoint: error = %v, want the status and the server's reason", err)
	}
}

func TestLastRefreshed(t *testing.T) {
	m, err := Parse(strings.NewReader("# TYPE " + LastRefresh + " gauge\n" + LastRefresh + "{cluster=\"member2\"} 1.7000000125e9\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := m.LastRefreshed("member2")
	if want := time.Unix(1_700_000_012, 500_000_000); !ok || !got.Equal(want) {
		t.Errorf("LastRefreshed(member2) = %s, %v; want %s", got, ok, want)
	}
	if _, ok := m.LastRefreshed("member1"); ok {
		t.Error("a cluster without the gauge has a last refresh")
	}
}
