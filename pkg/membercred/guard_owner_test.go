package membercred

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
)

// instantGuard trips on count alone, as the guard did before MinDuration:
// the ownership tests are about which requests count, not when.
var instantGuard = OwnCredentialGuardOptions{Threshold: 2, MinDuration: time.Nanosecond}

func writeTokenFile(t *testing.T, path, token string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGuardNeverLendsTheOwnTokenToAForeignRequest is the confused-deputy
// attack: a request on the guarded config that carries someone else's
// credential (an explicit Authorization, or a rest.CopyConfig of the own
// config given another BearerToken) gets 401. It must come back untouched:
// never re-sent with the token file's token, never counted.
func TestGuardNeverLendsTheOwnTokenToAForeignRequest(t *testing.T) {
	tests := []struct {
		name string
		do   func(t *testing.T, srv *apiServer, own *rest.Config) (*http.Response, error)
	}{
		{"explicit Authorization header", func(t *testing.T, srv *apiServer, own *rest.Config) (*http.Response, error) {
			hc, err := rest.HTTPClientFor(own)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Authorization", "Bearer attacker-chosen")
			return hc.Do(req)
		}},
		{"rest.CopyConfig with another BearerToken", func(t *testing.T, srv *apiServer, own *rest.Config) (*http.Response, error) {
			other := rest.CopyConfig(own)
			other.BearerToken, other.BearerTokenFile = "impersonated-user-token", ""
			hc, err := rest.HTTPClientFor(other)
			if err != nil {
				t.Fatal(err)
			}
			return hc.Get(srv.URL)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t, "own-file-token")
			tokenFile := filepath.Join(t.TempDir(), "token")
			writeTokenFile(t, tokenFile, "own-file-token")
			f := newGuard(t, instantGuard)
			own := restConfigFor(t, srv)
			own.BearerTokenFile = tokenFile
			if err := f.guard.InstallOnOwnConfig(own); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				step(f.clock, time.Second)
				resp, err := tt.do(t, srv, own)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("foreign request got %d, want its own 401", resp.StatusCode)
				}
			}
			for _, r := range srv.requests() {
				if r.authorization == "Bearer own-file-token" {
					t.Fatalf("a foreign request was re-sent with the process's own token: server saw %+v", srv.requests())
				}
			}
			if n := len(srv.requests()); n != 3 {
				t.Errorf("server saw %d requests for 3 foreign requests, want 3 (no replays)", n)
			}
			if n := len(f.exits.calls()); n != 0 {
				t.Errorf("exit called %d times for foreign 401s, want 0", n)
			}
			if got := testutil.ToFloat64(f.m.ownUnauthorized); got != 0 {
				t.Errorf("own unauthorized_total = %v for foreign requests, want 0", got)
			}
		})
	}
}

// TestGuardAndMemberWrapperInEitherOrder: a member wrapper must never feed
// the guard. Member-then-guard is refused at install; guard-then-member
// (WrapTransport cannot refuse) must leave the member's 401s alone.
func TestGuardAndMemberWrapperInEitherOrder(t *testing.T) {
	t.Run("member then guard is refused", func(t *testing.T) {
		src, _, _ := newSource(t, storeWithToken("m"), "m", nil)
		cfg := &rest.Config{Host: "https://member:6443"}
		cfg.Wrap(src.WrapTransport)
		g, _ := NewOwnCredentialGuard(OwnCredentialGuardOptions{})
		if err := g.InstallOnOwnConfig(cfg); err == nil {
			t.Fatal("InstallOnOwnConfig accepted a member config")
		}
	})
	t.Run("guard then member ignores the member's 401s", func(t *testing.T) {
		srv := newAPIServer(t) // rejects every member token
		st := storeWithToken("member-token")
		src, _, _ := newSource(t, st, "member-token", nil)
		f := newGuard(t, instantGuard)
		cfg := restConfigFor(t, srv)
		if err := f.guard.InstallOnOwnConfig(cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Wrap(src.WrapTransport)
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			step(f.clock, time.Minute)
			get(t, hc, srv.URL)
		}
		if n := len(f.exits.calls()); n != 0 {
			t.Errorf("exit called %d times for a member's 401s, want 0", n)
		}
		if got := testutil.ToFloat64(f.m.ownUnauthorized); got != 0 {
			t.Errorf("own unauthorized_total = %v for member requests, want 0", got)
		}
	})
}

// TestGuardOwnCredentialStillCounts: the ownership check must not blind the
// guard to its own credential in each form a process has it.
func TestGuardOwnCredentialStillCounts(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, cfg *rest.Config)
	}{
		{"static BearerToken", func(t *testing.T, cfg *rest.Config) { cfg.BearerToken = "own-static" }},
		{"BearerTokenFile", func(t *testing.T, cfg *rest.Config) {
			cfg.BearerTokenFile = filepath.Join(t.TempDir(), "token")
			writeTokenFile(t, cfg.BearerTokenFile, "own-file")
		}},
		{"in-cluster style: BearerToken read from BearerTokenFile", func(t *testing.T, cfg *rest.Config) {
			cfg.BearerTokenFile = filepath.Join(t.TempDir(), "token")
			writeTokenFile(t, cfg.BearerTokenFile, "own-file")
			cfg.BearerToken = "own-file"
		}},
		{"client certificate only (no Authorization)", func(t *testing.T, cfg *rest.Config) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t) // rejects everything
			f := newGuard(t, instantGuard)
			hc := ownClient(t, srv, f.guard, func(cfg *rest.Config) { tt.edit(t, cfg) })
			for range 2 {
				step(f.clock, time.Second)
				get(t, hc, srv.URL)
			}
			if n := len(f.exits.calls()); n != 1 {
				t.Errorf("exit called %d times after 2 persisting own 401s with threshold 2, want 1", n)
			}
		})
	}
}

// TestGuardSafeDefaults: with the defaults, a few seconds of 401s (an API
// server restarting with a cold authentication cache, a webhook
// authenticator blip) must not exit; a credential rejected for longer than
// DefaultGuardMinDuration plus the guard's jitter must.
func TestGuardSafeDefaults(t *testing.T) {
	unauthorized := func(every time.Duration) response {
		return response{after: every, status: http.StatusUnauthorized}
	}
	tests := []struct {
		name      string
		responses []response
		wantExits int
	}{
		{"ten seconds of 401s every second", repeat(10, unauthorized(time.Second)), 0},
		{"a minute of 401s every 2s (leader election) stays under min duration plus jitter",
			repeat(int(DefaultGuardMinDuration/(2*time.Second)), unauthorized(2*time.Second)), 0},
		{"401s every 2s for min duration plus the largest jitter",
			repeat(int((DefaultGuardMinDuration+maxGuardJitter(DefaultGuardMinDuration))/(2*time.Second))+1, unauthorized(2*time.Second)), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t)
			f := newGuard(t, OwnCredentialGuardOptions{})
			f.guard.jitter = maxGuardJitter(DefaultGuardMinDuration) // the worst case for "it does fire"
			hc := ownClient(t, srv, f.guard, staticToken)
			for _, r := range tt.responses {
				step(f.clock, r.after)
				srv.answer(r.status)
				get(t, hc, srv.URL)
			}
			if n := len(f.exits.calls()); n != tt.wantExits {
				t.Errorf("exit called %d times, want %d", n, tt.wantExits)
			}
		})
	}
}

// TestGuardJitterSpreadsReplicas: replicas that see the same outage must
// not trip at the same instant. Each guard draws its own delay in
// [0, maxGuardJitter(MinDuration)).
func TestGuardJitterSpreadsReplicas(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 20 {
		g, err := NewOwnCredentialGuard(OwnCredentialGuardOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.jitter < 0 || g.jitter >= maxGuardJitter(DefaultGuardMinDuration) {
			t.Fatalf("jitter %s outside [0, %s)", g.jitter, maxGuardJitter(DefaultGuardMinDuration))
		}
		seen[g.jitter] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 guards drew only %d distinct jitters: replicas would trip together", len(seen))
	}
}
