package membercred

// Tests written from the mutants `make mutate` found living in this
// package (docs/testing.md): each pins a behaviour no other test observed.

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// loopWrapper is a wrapper whose inner round tripper is itself: a cycle.
// It counts the walk's steps and ends the chain after 1000, so a walk
// without its bound ends too (and fails the count) instead of hanging.
type loopWrapper struct{ steps int }

func (l *loopWrapper) RoundTrip(*http.Request) (*http.Response, error) { return nil, nil }

func (l *loopWrapper) WrappedRoundTripper() http.RoundTripper {
	l.steps++
	if l.steps >= 1000 {
		return nil
	}
	return l
}

var _ utilnet.RoundTripperWrapper = (*loopWrapper)(nil)

// TestWrappedByStopsAtItsBound: a wrapper chain that cycles is walked 64
// steps, the documented bound, and the guard is still installed.
func TestWrappedByStopsAtItsBound(t *testing.T) {
	loop := &loopWrapper{}
	member, guard := wrappedBy(func(http.RoundTripper) http.RoundTripper { return loop })
	if member || guard || loop.steps != 64 {
		t.Errorf("wrappedBy over a cycle: member %v guard %v after %d steps, want neither after 64", member, guard, loop.steps)
	}
}

// TestGuardMinDurationCountsFromTheRunsFirstStrike: the minimum duration is
// measured from the first 401 of the run, so strikes spaced below it add up
// to it; the run's start is logged once, not at every strike.
func TestGuardMinDurationCountsFromTheRunsFirstStrike(t *testing.T) {
	srv := newAPIServer(t) // rejects everything
	f := newGuard(t, OwnCredentialGuardOptions{Threshold: 2, MinDuration: 10 * time.Second})
	f.guard.jitter = 0 // drawn at random; the bound is MinDuration alone here
	hc := ownClient(t, srv, f.guard, staticToken)
	for i, at := range []time.Duration{0, 4 * time.Second, 8 * time.Second, 12 * time.Second} {
		if i > 0 {
			step(f.clock, 4*time.Second)
		}
		get(t, hc, srv.URL)
		want := 0
		if at >= 10*time.Second {
			want = 1
		}
		if got := len(f.exits.calls()); got != want {
			t.Fatalf("%s into the run: exit called %d times, want %d", at, got, want)
		}
	}
	if got := f.logs.containing("rejected even after re-reading it"); len(got) != 1 {
		t.Errorf("run start logged %d times over 4 strikes, want once: %q", len(got), got)
	}
}

// TestGuardOtherCredentialsSuccessKeepsTheRun: a request carrying another
// credential that succeeds says nothing about the own one, so it does not
// end the run of the own credential's 401s.
func TestGuardOtherCredentialsSuccessKeepsTheRun(t *testing.T) {
	srv := newAPIServer(t, "other-token") // the own static token is rejected
	f := newGuard(t, OwnCredentialGuardOptions{Threshold: 2, MinDuration: NoGuardMinDuration})
	hc := ownClient(t, srv, f.guard, staticToken)
	get(t, hc, srv.URL)
	step(f.clock, 2*time.Second)
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer other-token")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("other credential: status %d, want 200", resp.StatusCode)
	}
	step(f.clock, 2*time.Second)
	get(t, hc, srv.URL)
	if got := len(f.exits.calls()); got != 1 {
		t.Errorf("exit called %d times after two own 401s around another credential's 200, want 1", got)
	}
}

// TestGuardMinDurationValueZero: pflag renders a zero value of the flag's
// type (nil pointer inside) when it prints defaults; that must not panic.
func TestGuardMinDurationValueZero(t *testing.T) {
	var nilValue *GuardMinDurationValue
	if got := nilValue.String(); got != "" {
		t.Errorf("nil value String() = %q, want empty", got)
	}
	if got := (&GuardMinDurationValue{}).String(); got != "" {
		t.Errorf("zero value String() = %q, want empty", got)
	}
}

// TestGuardJitterIsAtMostHalfTheMinimum: replicas spread their exits over
// half the minimum duration, never more.
func TestGuardJitterIsAtMostHalfTheMinimum(t *testing.T) {
	if got := maxGuardJitter(time.Minute); got != 30*time.Second {
		t.Errorf("maxGuardJitter(1m) = %s, want 30s", got)
	}
}

// TestGuardReplaysOnlyWithAFresherFileToken: a 401 is replayed only with a
// token the file holds now that differs from the one the request carried;
// the same token, or an unreadable file, gives nothing to replay with.
func TestGuardReplaysOnlyWithAFresherFileToken(t *testing.T) {
	srv := newAPIServer(t) // rejects everything
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("own-file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newGuard(t, OwnCredentialGuardOptions{Threshold: 10})
	hc := ownClient(t, srv, f.guard, func(c *rest.Config) { c.BearerTokenFile = tokenFile })
	get(t, hc, srv.URL)
	if n := len(srv.requests()); n != 1 {
		t.Errorf("the file holds the rejected token: %d requests, want 1 (no replay)", n)
	}
	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	step(f.clock, 2*time.Second)
	get(t, hc, srv.URL)
	var auths []string
	for _, r := range srv.requests() {
		auths = append(auths, r.authorization)
	}
	if len(auths) != 2 {
		t.Errorf("the file is gone: server saw %q, want one more request and no replay", auths)
	}
}

// TestNewMetricsRefusesAClash: a registry holding another collector under
// one of the metrics' names is an error, whether the registry reports it as
// a clash or as the same descriptor of another kind; never a panic.
func TestNewMetricsRefusesAClash(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other prometheus.Collector
	}{
		// Same name, no labels: a different descriptor.
		{"other labels", prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace, Subsystem: memberSubsystem, Name: "refreshes_total", Help: "x"})},
		// Same name, help and labels, but a gauge: the registry calls it
		// already registered.
		{"same descriptor, another kind", prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: metricsNamespace, Subsystem: memberSubsystem, Name: "refreshes_total",
			Help: "Reads of a member cluster's Secret that yielded a usable bearer token."}, []string{"cluster"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(tc.other)
			var m *Metrics
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("NewMetrics panicked: %v", p)
					}
				}()
				m, err = NewMetrics(reg)
			}()
			if err == nil || m != nil {
				t.Errorf("NewMetrics over a clashing collector: %v, %v; want an error", m, err)
			}
		})
	}
}
