package membercred

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

// guardStrikeSpacing is the shortest time between two counted 401s. A
// transient event (an API server restarting with a cold authentication
// cache) can reject every in-flight request of a healthy process at the same
// instant; a process has a dozen informers plus leader election, so without
// this one event could reach any threshold. A revoked credential keeps
// failing over time instead: leader election alone renews every 2s.
const guardStrikeSpacing = time.Second

// OwnCredentialGuard watches the 401s a process gets with its OWN API server
// credential and acts when they persist. Install it with InstallOnOwnConfig
// on the process's own rest.Config only; it has no WrapTransport method on
// purpose, so it cannot be put on a member cluster's client by accident.
//
// A 401 counts only when it persists after a fresh credential: with
// cfg.BearerTokenFile the file is re-read, and a request that carried an
// older token is replayed once with the new one (that 401 is not counted).
// A static BearerToken or client certificate cannot be re-read here, so
// their 401s count at once. Any other response (including 403, which is
// authorization, not authentication) ends the run; transport errors neither
// count nor end it. The guard trips when the last Threshold strikes span at
// most Window AND the run has lasted MinDuration plus this guard's jitter.
//
// Only the process's own credential is looked at: a request that carries
// any other (an explicit Authorization header, a rest.CopyConfig given
// another BearerToken, a member token set by a wrapper outside the guard)
// passes through untouched, is never replayed with the own token, and
// neither counts nor resets. The own credential is the config's BearerToken,
// a token read from its BearerTokenFile, or, with neither, no Authorization
// header at all (client certificates). Configs whose credential comes from
// an exec plugin, an auth provider or basic auth are left unguarded (see
// InstallOnOwnConfig): the guard could not tell their requests apart.
type OwnCredentialGuard struct {
	threshold   int
	window      time.Duration
	minDuration time.Duration
	// jitter is drawn once per guard in [0, maxGuardJitter(minDuration)),
	// so replicas that see one outage trip at different times.
	jitter  time.Duration
	action  GuardAction
	exit    func(int)
	metrics *Metrics
	log     logr.Logger
	clock   clock.PassiveClock

	// strikes mirrors len(g.recent) > 0 so that accepted responses, the
	// common case, skip the mutex.
	strikes atomic.Int64

	mu       sync.Mutex
	recent   []time.Time // times of the current run's strikes, at most threshold
	runStart time.Time   // time of the current run's first strike
	run      int         // strikes in the current run
	tripped  bool
	host     string // API server host of the last counted 401
}

// NewOwnCredentialGuard validates opts and returns a guard.
func NewOwnCredentialGuard(opts OwnCredentialGuardOptions) (*OwnCredentialGuard, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("membercred: invalid OwnCredentialGuardOptions: %w", err)
	}
	opts = opts.withDefaults()
	if opts.MinDuration == NoGuardMinDuration {
		// A run of 0 has lasted long enough at its first strike, and no
		// jitter is drawn: maxGuardJitter(0) is 0.
		opts.MinDuration = 0
	}
	var jitter time.Duration
	if maxJitter := maxGuardJitter(opts.MinDuration); maxJitter > 0 {
		jitter = rand.N(maxJitter)
	}
	return &OwnCredentialGuard{
		threshold:   opts.Threshold,
		window:      opts.Window,
		minDuration: opts.MinDuration,
		jitter:      jitter,
		action:      opts.Action,
		exit:        opts.Exit,
		metrics:     opts.Metrics,
		log:         opts.Logger,
		clock:       opts.Clock,
		recent:      make([]time.Time, 0, opts.Threshold),
	}, nil
}

// InstallOnOwnConfig wraps cfg's transport with the guard. cfg must be the
// process's own API server config (in-cluster or kubeconfig). It refuses a
// config that already carries this package's member token wrapper, or this
// guard twice. Detection follows WrappedRoundTripper(), so a member wrapper
// hidden behind a wrapper that does not expose its inner round tripper is
// not seen; a member wrapper added after the guard is harmless, since the
// guard ignores requests that do not carry the own credential.
//
// A config whose credential the guard cannot recognise on a request (exec
// plugin, auth provider, basic auth) is left unguarded with one log line
// and no error: the process then behaves as upstream's does.
func (g *OwnCredentialGuard) InstallOnOwnConfig(cfg *rest.Config) error {
	if cfg == nil {
		return errors.New("membercred: InstallOnOwnConfig: nil rest.Config")
	}
	member, guarded := wrappedBy(cfg.WrapTransport)
	if member {
		return fmt.Errorf("membercred: refusing to install the own-credential guard on the config for %s: it carries a member cluster token wrapper, and a member's 401s must never stop this process", cfg.Host)
	}
	if guarded {
		return fmt.Errorf("membercred: the own-credential guard is already installed on the config for %s", cfg.Host)
	}
	if kind := unrecognisableCredential(cfg); kind != "" {
		g.log.Info("Own-credential guard not installed: requests authenticated by "+kind+" cannot be told apart from other credentials on the same config",
			"host", cfg.Host)
		return nil
	}
	cred := newOwnCredential(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &ownCredentialRoundTripper{guard: g, cred: cred, next: rt}
	})
	return nil
}

// wrappedBy builds the chain wt makes around an unused transport and walks
// it through WrappedRoundTripper(). Building it is cheap and side-effect free
// for client-go's and Karmada's wrappers, which only allocate structs.
func wrappedBy(wt transport.WrapperFunc) (member, guard bool) {
	if wt == nil {
		return false, false
	}
	rt := wt(&http.Transport{})
	for depth := 0; rt != nil && depth < 64; depth++ { // 64: a bound against a cycle, far above any real chain
		switch rt.(type) {
		case *memberTokenRoundTripper:
			member = true
		case *ownCredentialRoundTripper:
			guard = true
		}
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			break
		}
		rt = w.WrappedRoundTripper()
	}
	return member, guard
}

// Checker reports the guard's state in the shape of controller-runtime's
// healthz.Checker: an error while tripped, nil otherwise. With
// GuardActionUnhealthy this is how the guard acts; with GuardActionExit it
// also fails in the moment before the process exits.
func (g *OwnCredentialGuard) Checker() func(*http.Request) error {
	return func(*http.Request) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.tripped {
			return nil
		}
		return fmt.Errorf("own API server credential rejected by %s: %d consecutive 401 Unauthorized (persisting after re-reading the credential)", g.host, g.run)
	}
}

// strike counts a 401 that persisted after a fresh credential, and trips the
// guard when the last threshold strikes span at most the window.
func (g *OwnCredentialGuard) strike(host string) {
	now := g.clock.Now()
	g.mu.Lock()
	if n := len(g.recent); n > 0 && now.Sub(g.recent[n-1]) < guardStrikeSpacing {
		g.mu.Unlock()
		return // same instant as the last strike: one event, counted once
	}
	if len(g.recent) == g.threshold {
		g.recent = append(g.recent[:0], g.recent[1:]...)
	}
	g.recent = append(g.recent, now)
	if g.run == 0 {
		g.runStart = now
	}
	g.run++
	g.host = host
	run := g.run
	trip := !g.tripped && len(g.recent) == g.threshold && now.Sub(g.recent[0]) <= g.window &&
		now.Sub(g.runStart) >= g.minDuration+g.jitter
	rejectedFor := now.Sub(g.runStart)
	if trip {
		g.tripped = true
	}
	g.strikes.Store(int64(run))
	g.metrics.ownStreak(run) // under the lock: the gauge follows the same order as the state
	g.mu.Unlock()

	if run == 1 {
		g.log.V(2).Info("Own API server credential rejected even after re-reading it", "host", host)
	}
	if !trip {
		return
	}
	g.metrics.ownTripped()
	if g.action == GuardActionExit {
		// The message promises a visible restart that re-reads the
		// credential, not a new one: a restarted container gets the same
		// projected ServiceAccount token until the kubelet renews it
		// (docs/membercred.md, "What a kubelet restart gives the restarted
		// container").
		g.log.Error(nil, "Own API server credential is permanently rejected, exiting so the restarted process re-reads its credential",
			"host", host, "consecutive401s", run, "threshold", g.threshold, "window", g.window, "rejectedFor", rejectedFor)
		g.exit(1)
		return
	}
	g.log.Error(nil, "Own API server credential is permanently rejected, reporting unhealthy until a request is accepted",
		"host", host, "consecutive401s", run, "threshold", g.threshold, "window", g.window, "rejectedFor", rejectedFor)
}

// accepted ends a run of strikes. One atomic load in the common case.
func (g *OwnCredentialGuard) accepted() {
	if g.strikes.Load() == 0 {
		return
	}
	g.mu.Lock()
	wasTripped, run, host := g.tripped, g.run, g.host
	g.recent = g.recent[:0]
	g.run = 0
	g.tripped = false
	g.strikes.Store(0)
	g.metrics.ownStreak(0)
	g.mu.Unlock()

	if wasTripped {
		g.log.Info("Own API server credential accepted again", "host", host, "after401s", run)
	}
}
