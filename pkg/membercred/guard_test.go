package membercred

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

type exitRecorder struct {
	mu    sync.Mutex
	codes []int
}

func (e *exitRecorder) exit(code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.codes = append(e.codes, code)
}

func (e *exitRecorder) calls() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.codes...)
}

type guardFixture struct {
	guard *OwnCredentialGuard
	clock *testingclock.FakePassiveClock
	exits *exitRecorder
	logs  *logLines
	m     *Metrics
}

func newGuard(t *testing.T, opts OwnCredentialGuardOptions) guardFixture {
	t.Helper()
	f := guardFixture{clock: fakeClock(), exits: &exitRecorder{}, logs: &logLines{}}
	f.m, _ = newTestMetrics(t)
	opts.Exit, opts.Logger, opts.Clock, opts.Metrics = f.exits.exit, f.logs.logger(), f.clock, f.m
	g, err := NewOwnCredentialGuard(opts)
	if err != nil {
		t.Fatalf("NewOwnCredentialGuard: %v", err)
	}
	f.guard = g
	return f
}

// ownClient returns a client for srv built from a rest.Config the way a
// process builds its own, with the guard installed.
func ownClient(t *testing.T, srv *apiServer, g *OwnCredentialGuard, edit func(*rest.Config)) *http.Client {
	t.Helper()
	cfg := restConfigFor(t, srv)
	edit(cfg)
	if err := g.InstallOnOwnConfig(cfg); err != nil {
		t.Fatalf("InstallOnOwnConfig: %v", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

func staticToken(cfg *rest.Config) { cfg.BearerToken = "static-own-token" }

type response struct {
	after  time.Duration // fake time elapsed before this request
	status int
}

func repeat(n int, r response) []response {
	out := make([]response, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func seq(parts ...[]response) []response {
	var out []response
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestGuardThresholds(t *testing.T) {
	unauthorized := response{after: time.Second, status: http.StatusUnauthorized}
	ok := response{after: time.Second, status: http.StatusOK}
	forbidden := response{after: time.Second, status: http.StatusForbidden}
	tests := []struct {
		name      string
		responses []response
		wantExits int
	}{
		{"one transient 401 never fires", seq(repeat(1, unauthorized), repeat(1, ok)), 0},
		{"threshold-1 persisting 401s do not fire", repeat(DefaultGuardThreshold-1, unauthorized), 0},
		{"threshold persisting 401s fire", repeat(DefaultGuardThreshold, unauthorized), 1},
		{"fires once however long it lasts", repeat(3*DefaultGuardThreshold, unauthorized), 1},
		{"a success in between resets", seq(repeat(4, unauthorized), repeat(1, ok), repeat(4, unauthorized)), 0},
		{"a 403 in between resets", seq(repeat(4, unauthorized), repeat(1, forbidden), repeat(4, unauthorized)), 0},
		{"403s do not count", repeat(20, forbidden), 0},
		{"401s spread beyond the window do not fire",
			repeat(3*DefaultGuardThreshold, response{after: 2 * time.Minute, status: http.StatusUnauthorized}), 0},
		{"401s spanning exactly the window fire",
			repeat(DefaultGuardThreshold, response{after: DefaultGuardWindow / (DefaultGuardThreshold - 1), status: http.StatusUnauthorized}), 1},
		// 10ms apart: time passes, so without the 1s strike spacing the
		// fifth 401 would trip (MinDuration is 1ns here).
		{"a burst within a second is one event",
			repeat(20, response{after: 10 * time.Millisecond, status: http.StatusUnauthorized}), 0},
		{"fires again after a reset", seq(repeat(5, unauthorized), repeat(1, ok), repeat(5, unauthorized)), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t)
			// Count and window alone: TestGuardSafeDefaults covers MinDuration.
			f := newGuard(t, OwnCredentialGuardOptions{MinDuration: time.Nanosecond})
			hc := ownClient(t, srv, f.guard, staticToken)

			var unauthorizedCount int
			for _, r := range tt.responses {
				step(f.clock, r.after)
				srv.answer(r.status)
				if code, _ := get(t, hc, srv.URL); code != r.status {
					t.Fatalf("status %d, want %d", code, r.status)
				}
				if r.status == http.StatusUnauthorized {
					unauthorizedCount++
				}
			}

			exits := f.exits.calls()
			if len(exits) != tt.wantExits {
				t.Fatalf("exit called %d times, want %d", len(exits), tt.wantExits)
			}
			for _, code := range exits {
				if code != 1 {
					t.Errorf("exit code %d, want 1", code)
				}
			}
			lines := f.logs.containing("permanently rejected, exiting")
			if len(lines) != tt.wantExits {
				t.Errorf("%d exit log lines, want %d: %q", len(lines), tt.wantExits, f.logs.all())
			}
			host := strings.TrimPrefix(srv.URL, "https://")
			for _, line := range lines {
				if !strings.Contains(line, host) {
					t.Errorf("exit line %q does not name the API server %s", line, host)
				}
			}
			assertNoLeak(t, "static-own-token", f.logs.all()...)
			if got := int(testutil.ToFloat64(f.m.ownUnauthorized)); got != unauthorizedCount {
				t.Errorf("own unauthorized_total = %d, want %d", got, unauthorizedCount)
			}
			if got := int(testutil.ToFloat64(f.m.ownGuardTripped)); got != tt.wantExits {
				t.Errorf("guard_tripped_total = %d, want %d", got, tt.wantExits)
			}
		})
	}
}

// TestGuardBearerTokenFileRotation: kubelet rotated the projected token and
// the API server no longer takes the old one. client-go's bearer wrapper
// still serves its cached copy; the guard re-reads the file, replays once,
// and does not count the 401.
func TestGuardBearerTokenFileRotation(t *testing.T) {
	srv := newAPIServer(t, "old")
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeToken := func(tok string) {
		if err := os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeToken("old")
	f := newGuard(t, OwnCredentialGuardOptions{Threshold: 2, MinDuration: time.Nanosecond})
	hc := ownClient(t, srv, f.guard, func(c *rest.Config) { c.BearerTokenFile = tokenFile })

	if code, _ := get(t, hc, srv.URL); code != http.StatusOK {
		t.Fatalf("status %d before rotation, want 200", code)
	}
	writeToken("new")
	srv.accept("new")
	for range 2 * f.guard.threshold {
		step(f.clock, time.Minute)
		if code, _ := get(t, hc, srv.URL); code != http.StatusOK {
			t.Fatalf("status %d after rotation, want 200 via the replay", code)
		}
	}
	var auths []string
	for _, r := range srv.requests()[1:3] {
		auths = append(auths, r.authorization)
	}
	if strings.Join(auths, ",") != "Bearer old,Bearer new" {
		t.Errorf("server saw %q after rotation, want the cached token then the file's", auths)
	}
	if n := len(f.exits.calls()); n != 0 {
		t.Errorf("exit called %d times for 401s cured by the file, want 0", n)
	}
	if got := int(testutil.ToFloat64(f.m.ownUnauthorizedRecovered)); got != 2*f.guard.threshold {
		t.Errorf("own unauthorized_recovered_total = %d, want %d", got, 2*f.guard.threshold)
	}

	// The file's token is rejected too: now the 401s persist and count.
	writeToken("also-revoked")
	for range f.guard.threshold {
		step(f.clock, time.Minute)
		get(t, hc, srv.URL)
	}
	if n := len(f.exits.calls()); n != 1 {
		t.Errorf("exit called %d times once the file's token is rejected too, want 1", n)
	}
	assertNoLeak(t, "also-revoked", f.logs.all()...)
}

func TestGuardCheckerFlips(t *testing.T) {
	srv := newAPIServer(t)
	f := newGuard(t, OwnCredentialGuardOptions{Action: GuardActionUnhealthy, Threshold: 3, MinDuration: time.Nanosecond})
	hc := ownClient(t, srv, f.guard, staticToken)
	check := f.guard.Checker()

	if err := check(nil); err != nil {
		t.Fatalf("checker = %v before any 401, want nil", err)
	}
	srv.answer(http.StatusUnauthorized)
	for range 3 {
		step(f.clock, time.Second)
		get(t, hc, srv.URL)
	}
	err := check(nil)
	if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(srv.URL, "https://")) {
		t.Fatalf("checker = %v after 3 persisting 401s, want an error naming the API server", err)
	}
	if n := len(f.exits.calls()); n != 0 {
		t.Errorf("exit called %d times with the unhealthy action, want 0", n)
	}
	if got := testutil.ToFloat64(f.m.ownPersisting); got != 3 {
		t.Errorf("persisting_unauthorized = %v, want 3", got)
	}

	srv.answer(http.StatusOK)
	get(t, hc, srv.URL)
	if err := check(nil); err != nil {
		t.Errorf("checker = %v after a success, want nil", err)
	}
	if got := testutil.ToFloat64(f.m.ownPersisting); got != 0 {
		t.Errorf("persisting_unauthorized = %v after a success, want 0", got)
	}
}

// karmadaProxyHeaderWrapper mimics Karmada's proxyHeaderRoundTripper, which
// does not expose its inner round tripper.
type karmadaProxyHeaderWrapper struct{ rt http.RoundTripper }

func (w karmadaProxyHeaderWrapper) RoundTrip(r *http.Request) (*http.Response, error) {
	return w.rt.RoundTrip(r)
}

func TestInstallOnOwnConfigRefusals(t *testing.T) {
	src, _, _ := newSource(t, storeWithToken("t"), "t", nil)
	tests := []struct {
		name    string
		cfg     func() *rest.Config
		wantErr string
	}{
		{"nil config", func() *rest.Config { return nil }, "nil rest.Config"},
		{"member config", func() *rest.Config {
			cfg := &rest.Config{Host: "https://member:6443"}
			cfg.Wrap(src.WrapTransport)
			return cfg
		}, "member cluster token wrapper"},
		{"member config, Karmada style with proxy headers", func() *rest.Config {
			cfg := &rest.Config{Host: "https://member:6443"}
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return karmadaProxyHeaderWrapper{rt} })
			cfg.Wrap(src.WrapTransport)
			return cfg
		}, "member cluster token wrapper"},
		{"installed twice", func() *rest.Config {
			cfg := &rest.Config{Host: "https://own:6443"}
			g, _ := NewOwnCredentialGuard(OwnCredentialGuardOptions{})
			if err := g.InstallOnOwnConfig(cfg); err != nil {
				t.Fatal(err)
			}
			return cfg
		}, "already installed"},
		{"own config with other wrappers", func() *rest.Config {
			cfg := &rest.Config{Host: "https://own:6443"}
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return karmadaProxyHeaderWrapper{rt} })
			return cfg
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewOwnCredentialGuard(OwnCredentialGuardOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = g.InstallOnOwnConfig(tt.cfg())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("InstallOnOwnConfig: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("InstallOnOwnConfig = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestGuardOptionsValidate(t *testing.T) {
	tests := []struct {
		name  string
		opts  OwnCredentialGuardOptions
		field string // "" = valid
	}{
		{"zero means defaults", OwnCredentialGuardOptions{}, ""},
		{"threshold 1 (exit on first 401)", OwnCredentialGuardOptions{Threshold: 1}, ""},
		{"unhealthy", OwnCredentialGuardOptions{Action: GuardActionUnhealthy}, ""},
		{"negative threshold", OwnCredentialGuardOptions{Threshold: -1}, "Threshold"},
		{"negative window", OwnCredentialGuardOptions{Window: -time.Second}, "Window"},
		{"negative min duration", OwnCredentialGuardOptions{MinDuration: -time.Second}, "MinDuration"},
		{"unknown action", OwnCredentialGuardOptions{Action: "reboot"}, "Action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.field)
			}
			if _, err := NewOwnCredentialGuard(tt.opts); err == nil {
				t.Error("NewOwnCredentialGuard accepted invalid options")
			}
		})
	}
}

func TestParseGuardAction(t *testing.T) {
	for in, want := range map[string]GuardAction{"exit": GuardActionExit, "unhealthy": GuardActionUnhealthy} {
		if got, err := ParseGuardAction(in); err != nil || got != want {
			t.Errorf("ParseGuardAction(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Exit", "restart"} {
		if _, err := ParseGuardAction(in); err == nil {
			t.Errorf("ParseGuardAction(%q) succeeded, want an error", in)
		}
	}
}
