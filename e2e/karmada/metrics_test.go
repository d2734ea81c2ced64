package karmada

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	m, err := ParseMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		family string
		match  map[string]string
		want   float64
	}{
		{name: "one cluster", family: MemberUnauthorized, match: map[string]string{"cluster": "member1"}, want: 3},
		{name: "all clusters", family: MemberUnauthorized, want: 7},
		{name: "over another label", family: "holdfast_member_credential_refresh_failures_total", match: map[string]string{"cluster": "member1"}, want: 3},
		{name: "two labels", family: "holdfast_member_credential_refresh_failures_total", match: map[string]string{"cluster": "member1", "reason": "empty"}, want: 1},
		{name: "unknown cluster", family: MemberUnauthorized, match: map[string]string{"cluster": "member3"}, want: 0},
		{name: "label the family lacks", family: MemberUnauthorized, match: map[string]string{"reason": "empty"}, want: 0},
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

func TestScrapeMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, exposition)
	}))
	defer srv.Close()

	m, err := ScrapeMetrics(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sum(MemberUnauthorized, nil); got != 7 {
		t.Errorf("scraped %s = %v, want 7", MemberUnauthorized, got)
	}
	if _, err := ScrapeMetrics(context.Background(), srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("ScrapeMetrics(/nope) error = %v, want the 404 named", err)
	}
}

func TestMemberCredential(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(exposition))
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
