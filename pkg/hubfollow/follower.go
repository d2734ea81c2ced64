package hubfollow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
)

// Options are what the worker hands the follower besides its Config.
type Options struct {
	// Log receives the follower's lines. It never sees a token. The zero
	// Logger discards.
	Log logr.Logger
	// Registerer is where the metrics are registered; the worker passes
	// controller-runtime's metrics.Registry. Nil: metrics are kept but not
	// exported. Nothing is registered when the feature is off.
	Registerer prometheus.Registerer
	// Stop is called once, on a confirmed change of hub, and should make the
	// worker exit 0 (e.g. cancel the context its manager runs under) so the
	// kubelet restarts it and startup resolution connects to the new hub.
	// Required when the feature is on.
	Stop func()
	// Clock drives the wait between rounds. Default: the real clock.
	Clock clock.Clock
}

// prober is what the follower needs of a Prober; tests substitute scripted
// hubs. Probe must return within the resolve timeout.
type prober interface {
	Probe(ctx context.Context) ProbeResult
}

// Follower watches both hubs after startup and stops the worker when the
// Active hub has moved. The zero Follower (what Start returns when the
// feature is off) does nothing.
type Follower struct {
	log      logr.Logger
	interval time.Duration
	clock    clock.Clock
	probers  []prober
	resolver *resolver
	metrics  *metrics
	stop     func()

	// roundMu makes rounds exclusive: at most one probe of each hub is in
	// flight, however Run is called.
	roundMu   sync.Mutex
	connected Connection
	stopped   bool
	// lastSeen is each hub's last observation, so a state is logged when it
	// changes rather than every poll.
	lastSeen map[string]string
	// lastClaimState is the previous round's claimState* value, logged when
	// it changes.
	lastClaimState string
}

// Start decides which hub the worker connects to, before any hub client is
// built. With the feature off (HUB_SECONDARY_HOST_ENDPOINT unset, or a
// secondary that cannot work) it returns cfg.Primary at once: no client, no
// network call, no metric, so the worker behaves exactly as v1.6.4.
//
// With the feature on it reads both hubs once, concurrently, each bounded by
// the resolve timeout, and returns the configured connection the first usable
// claim names, or the primary when nothing usable is published. The returned
// Follower must then be Run to follow later changes.
//
// Start fails only when ctx ends before the hubs answered, when Stop is
// missing, or when the metrics cannot be registered.
func Start(ctx context.Context, cfg Config, opts Options) (Connection, *Follower, error) {
	return start(ctx, cfg, opts, func(conn Connection, cfg Config) prober {
		return NewProber(conn, cfg.ProjectNamespace, cfg.ClusterName, cfg.ResolveTimeout)
	})
}

// start is Start with the prober constructor injectable, so tests can prove
// that nothing is built when the feature is off.
func start(ctx context.Context, cfg Config, opts Options, newProber func(Connection, Config) prober) (Connection, *Follower, error) {
	log := opts.Log // the zero logr.Logger discards
	if reason := cfg.disabledReason(); reason != "" {
		log.V(1).Info("Hub failover following is off", "reason", reason)
		return cfg.Primary, &Follower{}, nil
	}
	if opts.Stop == nil {
		return Connection{}, nil, errors.New("hubfollow: Options.Stop is required when " + EnvSecondaryEndpoint + " is set")
	}
	cfg = cfg.withDefaults()
	pair, err := newHubPair(cfg.Primary, cfg.Secondary)
	if err != nil {
		return Connection{}, nil, fmt.Errorf("hubfollow: %w", err)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return Connection{}, nil, fmt.Errorf("hubfollow: registering metrics: %w", err)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	var once sync.Once
	f := &Follower{
		log:      log.WithName("hubfollow"),
		interval: cfg.ResolveInterval,
		clock:    clk,
		probers:  []prober{newProber(cfg.Primary, cfg), newProber(cfg.Secondary, cfg)},
		resolver: newResolver(pair, cfg.SwitchConfirmations),
		metrics:  m,
		stop:     func() { once.Do(opts.Stop) },
		lastSeen: map[string]string{},
	}

	results := f.probeAll(ctx)
	if err := ctx.Err(); err != nil {
		return Connection{}, nil, fmt.Errorf("hubfollow: resolving the active hub: %w", err)
	}
	conn, e := f.resolver.startup(results)
	f.connected = conn
	f.record(results, e)
	m.setActive(conn.Name)
	kv := []interface{}{"hub", conn.String(), "why", e.why}
	if e.winner != nil {
		kv = append(kv, "activeIdentity", e.winner.claim.Identity)
	}
	f.log.Info("Connecting to the active hub", kv...)
	return conn, f, nil
}

// Run polls both hubs, one resolve interval after the previous round ended,
// until ctx ends or a change of hub is confirmed, in which case it logs the change once, counts it, calls
// Options.Stop and returns. It never stops the worker on uncertainty: an
// unreachable hub, a rejected credential or a missing claim changes nothing.
//
// It always returns nil; the error result lets the worker add it to its
// manager as a runnable. Every replica should run it, not only the leader
// (each replica built its own hub clients), so wrap it in a runnable that
// does not need leader election, or simply run it in a goroutine.
func (f *Follower) Run(ctx context.Context) error {
	if f.resolver == nil {
		return nil // feature off
	}
	for {
		// The wait is armed only once a round has ended, never by a ticker:
		// a round may outlast the interval (the timeout may be as long or
		// longer), and a tick that fell due meanwhile would start the next
		// round at once, so two "consecutive" confirmations could be
		// moments apart. Measured from the end, every round's answers are
		// at least an interval after the previous round's.
		wait := f.clock.NewTimer(f.interval)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil
		case <-wait.C():
		}
		if f.poll(ctx) {
			return nil
		}
	}
}

// poll runs one round and reports whether the worker has been stopped.
func (f *Follower) poll(ctx context.Context) bool {
	f.roundMu.Lock()
	defer f.roundMu.Unlock()
	if f.stopped {
		return true
	}
	results := f.probeAll(ctx)
	if ctx.Err() != nil {
		// Shutting down: answers cut short by cancellation are no evidence.
		return false
	}
	s := f.resolver.observe(results)
	f.record(results, s.election)

	if a := s.abandoned; a != nil {
		f.log.Info("A pending change of hub was not confirmed; staying",
			"hub", f.connected.String(), "candidateEndpoint", a.key.endpoint, "candidateIdentity", a.key.identity,
			"seen", a.streak, "need", f.resolver.confirmations, "why", s.why)
	}
	if s.switchTo == nil {
		if s.streak > 0 {
			f.log.Info("A different hub is named active; waiting for confirmation",
				"hub", f.connected.String(), "candidate", s.winner.target.String(), "candidateIdentity", s.winner.claim.Identity,
				"seen", s.streak, "need", f.resolver.confirmations, "why", s.why)
		}
		return false
	}
	f.log.Info("The active hub changed; stopping so the worker restarts against it",
		"from", f.connected.String(), "to", s.switchTo.String(), "activeIdentity", s.winner.claim.Identity,
		"why", s.why, "confirmations", f.resolver.confirmations)
	f.metrics.switches.Inc()
	f.stopped = true
	f.stop()
	return true
}

// probeAll reads every hub concurrently; each probe bounds itself.
func (f *Follower) probeAll(ctx context.Context) []ProbeResult {
	results := make([]ProbeResult, len(f.probers))
	var wg sync.WaitGroup
	for i, p := range f.probers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = p.Probe(ctx)
		}()
	}
	wg.Wait()
	return results
}

// record counts each hub's answer and logs a hub's state when it changes.
func (f *Follower) record(results []ProbeResult, e election) {
	state := roundClaimState(results, e)
	f.metrics.setClaimState(state)
	if state != f.lastClaimState {
		f.lastClaimState = state
		if state == claimStateNoClaim {
			// Said once, not per hub: this is the state of every worker
			// whose hubs run a released KubeSlice controller, and the one
			// an operator must not mistake for "failover is covered".
			f.log.Info("No hub publishes status.activeController on this worker's Cluster: the worker stays on its hub and cannot follow a failover until the KubeSlice controller publishes it",
				"hub", f.connected.String())
		}
	}
	rejected := map[string]string{}
	for _, r := range e.rejected {
		f.metrics.observeRejection(r.publisher)
		rejected[r.publisher] = r.endpoint
	}
	for _, r := range results {
		f.metrics.observeProbe(r)
		seen := r.Kind.String()
		if r.Kind == ProbeClaim {
			seen = fmt.Sprintf("claim %q at %s", r.Claim.Identity, redactEndpoint(r.Claim.Endpoint))
		}
		if ep, ok := rejected[r.Hub]; ok {
			seen = reasonRejectedEndpoint + " " + ep
		}
		if f.lastSeen[r.Hub] == seen {
			continue
		}
		f.lastSeen[r.Hub] = seen
		switch {
		case rejected[r.Hub] != "":
			f.log.Error(nil, "Rejected a claim naming an endpoint outside the configured hubs; it has no say",
				"hub", r.Hub, "claimedEndpoint", rejected[r.Hub], "activeIdentity", r.Claim.Identity)
		case r.Kind.failed():
			f.log.Error(r.Err, "Hub probe failed; this hub has no say until it answers", "hub", r.Hub, "reason", r.Kind.String())
		default:
			f.log.Info("Hub answered", "hub", r.Hub, "answer", seen)
		}
	}
}

// roundClaimState is what one round found in status.activeController, as
// the state label of kubeslice_worker_hub_claim_state.
func roundClaimState(results []ProbeResult, e election) string {
	switch {
	case e.winner != nil:
		return claimStateClaim
	case len(e.rejected) > 0:
		return claimStateRejected
	}
	for _, r := range results {
		if r.Kind == ProbeNoClaim {
			return claimStateNoClaim
		}
	}
	return claimStateNoAnswer
}
