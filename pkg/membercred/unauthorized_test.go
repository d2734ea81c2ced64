package membercred

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHungGetterAfter401ReturnsTheOriginal401: the forced read after a 401
// hangs (a getter whose cache never syncs) and the request has no deadline of
// its own. The request must come back with its 401 once the bounded wait
// passes, and later 401s must not pile up behind the hung read either.
func TestHungGetterAfter401ReturnsTheOriginal401(t *testing.T) {
	srv := newAPIServer(t) // rejects "old"
	st := storeWithToken("old")
	st.gate = make(chan struct{}) // every read hangs until the test ends
	t.Cleanup(func() { close(st.gate) })
	m, _ := newTestMetrics(t)
	src, _, logs := newSource(t, st, "old", m)
	src.readWait = 50 * time.Millisecond
	c := client(srv, src)

	for i := range 3 {
		waitUnblocked(t, "a 401 behind a hung Secret read", func() {
			code, body := get(t, c, srv.URL)
			if code != http.StatusUnauthorized || body != unauthorizedBody {
				t.Errorf("request %d: got %d %q, want the original 401", i, code, body)
			}
		})
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times, want 1 (the hung read is joined, not repeated)", n)
	}
	if got := counter(t, m.unauthorizedPersisted, "member1"); got != 0 {
		t.Errorf("unauthorized_persisted_total = %d, want 0: nothing was learnt about the Secret", got)
	}
	if n := len(logs.containing("did not finish")); n != 1 {
		t.Errorf("%d lines about the slow read, want 1: %q", n, logs.all())
	}
}

// TestTokenWithoutDeadlineIsBounded: oauth2's Token() has no context; with
// no token cached and a hung getter it must still return.
func TestTokenWithoutDeadlineIsBounded(t *testing.T) {
	st := storeWithToken("tok")
	st.gate = make(chan struct{})
	t.Cleanup(func() { close(st.gate) })
	src, _, _ := newSource(t, st, "", nil)
	src.readWait = 50 * time.Millisecond

	waitUnblocked(t, "Token() with a hung getter", func() {
		if _, err := src.Token(); err == nil || !strings.Contains(err.Error(), "member1") {
			t.Errorf("Token() = %v, want an error naming the cluster", err)
		}
	})
}

// TestFailedForcedReadIsNotARejectedToken: the read after a 401 fails (the
// API server is unreachable, RBAC was lost). That says nothing about the
// token in the Secret, so it must not be reported as "the member rejects the
// Secret's token".
func TestFailedForcedReadIsNotARejectedToken(t *testing.T) {
	srv := newAPIServer(t) // rejects "old"
	st := storeWithToken("old")
	m, _ := newTestMetrics(t)
	src, _, logs := newSource(t, st, "old", m)
	st.setResult(nil, errors.New("connection refused"))

	if code, _ := get(t, client(srv, src), srv.URL); code != http.StatusUnauthorized {
		t.Fatalf("got %d, want the 401", code)
	}
	if got := counter(t, m.unauthorizedPersisted, "member1"); got != 0 {
		t.Errorf("unauthorized_persisted_total = %d, want 0 for a failed read", got)
	}
	if got := counter(t, m.refreshFailures, "member1", ReasonGetError); got != 1 {
		t.Errorf("refresh_failures_total{reason=get_error} = %d, want 1", got)
	}
	h := src.Health()
	if h.ConsecutivePersisted401s != 0 {
		t.Errorf("ConsecutivePersisted401s = %d, want 0", h.ConsecutivePersisted401s)
	}
	if err := h.Err(); err == nil || strings.Contains(err.Error(), "rejects the token") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Health().Err() = %v, want the read failure, not a rejected token", err)
	}
	if n := len(logs.containing("rejects its credential")); n != 0 {
		t.Errorf("logged a rejected credential for a failed read: %q", logs.all())
	}
}

// TestUnauthorizedRightAfterAPeriodicRead: a periodic read returned the
// token, then the Secret was rotated and the old token revoked, all within
// MinForcedRefreshInterval. The 401 must trigger one new read instead of
// reusing the periodic one.
func TestUnauthorizedRightAfterAPeriodicRead(t *testing.T) {
	srv := newAPIServer(t, "old")
	st := storeWithToken("old")
	m, _ := newTestMetrics(t)
	src, clk, _ := newSource(t, st, "old", m)
	c := client(srv, src)

	step(clk, DefaultRefreshPeriod)
	get(t, c, srv.URL) // served stale; starts the periodic read
	waitFor(t, "the periodic read", func() bool { return st.calls.Load() == 1 && settled(src) })

	step(clk, MinForcedRefreshInterval/10)
	st.set("new")
	srv.accept("new")
	if code, _ := get(t, c, srv.URL); code != http.StatusOK {
		t.Fatalf("got %d within %s of a periodic read, want 200 via one new read", code, MinForcedRefreshInterval)
	}
	if n := st.calls.Load(); n != 2 {
		t.Errorf("getter called %d times, want 2 (periodic + one forced)", n)
	}
}

// TestPersistentRejectionStaysRateLimited: a Secret whose token the member
// rejects costs at most one forced read per MinForcedRefreshInterval, however
// many requests 401 with that token: a read triggered by a 401 of the token
// is reused by later 401s of the same token within the interval.
func TestPersistentRejectionStaysRateLimited(t *testing.T) {
	srv := newAPIServer(t) // accepts nothing
	st := storeWithToken("old")
	src, clk, _ := newSource(t, st, "old", nil)
	c := client(srv, src)
	for range 5 {
		get(t, c, srv.URL)
		step(clk, MinForcedRefreshInterval/10)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times for 5 persisting 401s within %s, want 1", n, MinForcedRefreshInterval)
	}
	step(clk, MinForcedRefreshInterval)
	get(t, c, srv.URL)
	if n := st.calls.Load(); n != 2 {
		t.Errorf("getter called %d times after the interval, want 2", n)
	}
}
