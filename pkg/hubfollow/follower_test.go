package hubfollow

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// scriptedHub is a prober whose answers the test hands over one per round.
// Probe blocks until the test feeds it or the round's context ends.
type scriptedHub struct {
	name    string
	answers chan ProbeResult
	now     func() time.Time

	mu sync.Mutex
	// askedAt is the fake time of every Probe call: when each round started.
	askedAt []time.Time
}

func (s *scriptedHub) Probe(ctx context.Context) ProbeResult {
	if s.now != nil {
		s.mu.Lock()
		s.askedAt = append(s.askedAt, s.now())
		s.mu.Unlock()
	}
	select {
	case r := <-s.answers:
		return r
	case <-ctx.Done():
		return ProbeResult{Hub: s.name, Kind: ProbeTimeout, Err: ctx.Err()}
	}
}

func (s *scriptedHub) asks() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.askedAt...)
}

// armingClock counts the waits the follower arms, so a test can tell "idle
// until the clock moves" from "starting a round" without sleeping.
type armingClock struct {
	*testingclock.FakeClock
	armed atomic.Int64
}

func (c *armingClock) NewTimer(d time.Duration) clock.Timer {
	defer c.armed.Add(1) // once the clock knows of the wait
	return c.FakeClock.NewTimer(d)
}

func (c *armingClock) After(d time.Duration) <-chan time.Time {
	defer c.armed.Add(1) // once the clock knows of the wait
	return c.FakeClock.After(d)
}

func (c *armingClock) NewTicker(d time.Duration) clock.Ticker {
	defer c.armed.Add(1) // once the clock knows of the wait
	return c.FakeClock.NewTicker(d)
}

func (c *armingClock) Tick(d time.Duration) <-chan time.Time {
	defer c.armed.Add(1) // once the clock knows of the wait
	return c.FakeClock.Tick(d)
}

// scriptedFollower wires a follower to scripted hubs and a fake clock.
type scriptedFollower struct {
	t        *testing.T
	hubs     map[string]*scriptedHub
	clock    *testingclock.FakeClock
	armed    *atomic.Int64
	registry *prometheus.Registry
	stops    atomic.Int64
	stopped  chan struct{}
	follower *Follower
	conn     Connection
	built    atomic.Int64
}

func testConfig() Config {
	return Config{
		Primary: connA, Secondary: connB,
		ClusterName: testCluster, ProjectNamespace: testNamespace,
		ResolveInterval: 10 * time.Second, ResolveTimeout: 5 * time.Second, SwitchConfirmations: 2,
	}
}

// newScriptedFollower starts a follower whose startup poll is startupPoll.
func newScriptedFollower(t *testing.T, cfg Config, startupPoll string) *scriptedFollower {
	t.Helper()
	clk := &armingClock{FakeClock: testingclock.NewFakeClock(time.Date(2026, 8, 25, 16, 0, 0, 0, time.UTC))}
	sf := &scriptedFollower{
		t:        t,
		hubs:     map[string]*scriptedHub{},
		clock:    clk.FakeClock,
		armed:    &clk.armed,
		registry: prometheus.NewRegistry(),
		stopped:  make(chan struct{}),
	}
	for _, name := range []string{PrimaryName, SecondaryName} {
		sf.hubs[name] = &scriptedHub{name: name, answers: make(chan ProbeResult), now: clk.Now}
	}
	var startupDone chan struct{}
	if startupPoll != "" {
		startupDone = make(chan struct{})
		go func() {
			defer close(startupDone)
			sf.feed(poll(t, startupPoll))
		}()
	}
	conn, f, err := start(context.Background(), cfg, Options{
		Registerer: sf.registry,
		Clock:      clk,
		Stop: func() {
			if sf.stops.Add(1) == 1 {
				close(sf.stopped)
			}
		},
	}, func(c Connection, _ Config) prober {
		sf.built.Add(1)
		return sf.hubs[c.Name]
	})
	if err != nil {
		t.Fatal(err)
	}
	if startupDone != nil {
		<-startupDone
	}
	sf.follower, sf.conn = f, conn
	return sf
}

// feed hands one poll's answers to the hubs, failing the test if a round
// never asks for them.
func (sf *scriptedFollower) feed(results []ProbeResult) {
	for _, r := range results {
		select {
		case sf.hubs[r.Hub].answers <- r:
		case <-time.After(10 * time.Second):
			sf.t.Errorf("no probe of %s asked for an answer", r.Hub)
			return
		}
	}
}

// tick moves the fake clock one interval once Run's ticker exists, and feeds
// the round it starts.
func (sf *scriptedFollower) tick(symbol string) {
	sf.t.Helper()
	waitFor(sf.t, "Run's ticker", sf.clock.HasWaiters)
	sf.clock.Step(sf.follower.interval)
	sf.feed(poll(sf.t, symbol))
}

func (sf *scriptedFollower) run(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- sf.follower.Run(ctx) }()
	return done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitDone(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

func TestRunConfirmedSwitchStopsExactlyOnce(t *testing.T) {
	sf := newScriptedFollower(t, testConfig(), "A")
	if sf.conn != connA {
		t.Fatalf("startup connected to %+v, want the primary", sf.conn)
	}
	if n := sf.built.Load(); n != 2 {
		t.Errorf("%d probers built, want one per hub", n)
	}
	done := sf.run(context.Background())
	sf.tick("B")
	if sf.stops.Load() != 0 {
		t.Fatal("stopped after one poll; confirmations is 2")
	}
	sf.tick("B+") // a republished lastUpdated still confirms
	select {
	case <-sf.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("a confirmed change did not stop the worker")
	}
	if err := waitDone(t, "Run after a switch", done); err != nil {
		t.Errorf("Run returned %v", err)
	}
	// Run has returned; nothing can call stop again.
	sf.clock.Step(10 * sf.follower.interval)
	if n := sf.stops.Load(); n != 1 {
		t.Errorf("stop called %d times, want 1", n)
	}
	if n := testutil.ToFloat64(sf.follower.metrics.switches); n != 1 {
		t.Errorf("%s = %v, want 1", metricSwitches, n)
	}
}

// HUB_RESOLVE_TIMEOUT >= HUB_RESOLVE_INTERVAL is accepted, so a round can
// outlast the interval. The next round must still wait a full interval after
// the slow one ended: started at once, its answer would be a second
// "consecutive" confirmation moments after the first, and a switch would rest
// on what is in effect a single look at the hubs.
func TestRunSpacesRoundsAfterASlowRound(t *testing.T) {
	cfg := testConfig()
	cfg.ResolveTimeout = 2 * cfg.ResolveInterval
	sf := newScriptedFollower(t, cfg, "A")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := sf.run(ctx)

	waitFor(t, "Run to wait for its first round", sf.clock.HasWaiters)
	sf.clock.Step(cfg.ResolveInterval)
	first := poll(t, "B")
	sf.feed(first[1:]) // the secondary answers at once
	armed := sf.armed.Load()
	// The primary hangs for longer than an interval, within the timeout.
	sf.clock.Step(cfg.ResolveInterval + cfg.ResolveInterval/2)
	sf.feed(first[:1])
	firstEnded := sf.clock.Now()

	// Run either starts the next round with no time passing or arms a wait.
	asked := func() int { return len(sf.hubs[PrimaryName].asks()) + len(sf.hubs[SecondaryName].asks()) }
	waitFor(t, "the next round or a wait for it", func() bool { return asked() > 4 || sf.armed.Load() > armed })
	if asked() == 4 { // startup and the slow round
		sf.clock.Step(cfg.ResolveInterval)
	}
	sf.feed(poll(t, "B"))
	select {
	case <-sf.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("two polls naming B did not switch")
	}
	waitDone(t, "Run after a switch", done)

	for _, name := range []string{PrimaryName, SecondaryName} {
		asks := sf.hubs[name].asks()
		if len(asks) != 3 { // startup and two rounds
			t.Fatalf("%s probed %d times, want 3", name, len(asks))
		}
		if gap := asks[2].Sub(firstEnded); gap < cfg.ResolveInterval {
			t.Errorf("%s: the round after a slow one started %v after it ended, want at least the interval %v", name, gap, cfg.ResolveInterval)
		}
	}
}

func TestRunNeverStopsOnUncertainty(t *testing.T) {
	sf := newScriptedFollower(t, testConfig(), "A")
	ctx, cancel := context.WithCancel(context.Background())
	done := sf.run(ctx)
	for _, symbol := range []string{"-", "401", "evil", "0", "-", "B", "-", "B", "A", "B", "evil", "B", "0", "split", "A"} {
		sf.tick(symbol)
	}
	cancel()
	if err := waitDone(t, "Run after cancel", done); err != nil {
		t.Errorf("Run returned %v", err)
	}
	if n := sf.stops.Load(); n != 0 {
		t.Errorf("stop called %d times on uncertain or unconfirmed answers", n)
	}
	if n := testutil.ToFloat64(sf.follower.metrics.switches); n != 0 {
		t.Errorf("%s = %v, want 0", metricSwitches, n)
	}
}

func TestRunFlappingNeverSwitches(t *testing.T) {
	sf := newScriptedFollower(t, testConfig(), "A")
	ctx, cancel := context.WithCancel(context.Background())
	done := sf.run(ctx)
	for i := 0; i < 4; i++ {
		sf.tick("B")
		sf.tick("A")
	}
	cancel()
	waitDone(t, "Run", done)
	if n := sf.stops.Load(); n != 0 {
		t.Errorf("flapping A,B,A,B stopped the worker %d times", n)
	}
}

func TestRunReturnsWhenTheContextEnds(t *testing.T) {
	sf := newScriptedFollower(t, testConfig(), "A")
	ctx, cancel := context.WithCancel(context.Background())
	done := sf.run(ctx)
	waitFor(t, "Run's ticker", sf.clock.HasWaiters)
	cancel()
	if err := waitDone(t, "Run after cancel", done); err != nil {
		t.Errorf("Run returned %v", err)
	}
}

// A round cut short by shutdown is no evidence: it never counts toward a
// switch, and Run still returns.
func TestRunReturnsWhenTheContextEndsMidRound(t *testing.T) {
	cfg := testConfig()
	cfg.SwitchConfirmations = 1
	sf := newScriptedFollower(t, cfg, "A")
	ctx, cancel := context.WithCancel(context.Background())
	done := sf.run(ctx)
	waitFor(t, "Run's ticker", sf.clock.HasWaiters)
	sf.clock.Step(cfg.ResolveInterval)
	// The secondary answers "B" (which alone would switch at once), the
	// primary hangs until the context ends.
	sf.hubs[SecondaryName].answers <- claimed(SecondaryName, "hub-b", endpointB, t1)
	cancel()
	waitDone(t, "Run cancelled mid-round", done)
	if n := sf.stops.Load(); n != 0 {
		t.Errorf("stop called %d times for a round cut short by shutdown", n)
	}
}

func TestStartRequiresStopWhenEnabled(t *testing.T) {
	_, _, err := start(context.Background(), testConfig(), Options{}, func(Connection, Config) prober {
		t.Fatal("built a prober without a stop function")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "Options.Stop") {
		t.Errorf("err = %v, want one naming Options.Stop", err)
	}
}

func TestStartFailsWhenTheContextEndsFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hubs := map[string]*scriptedHub{
		PrimaryName: {name: PrimaryName, answers: make(chan ProbeResult)}, SecondaryName: {name: SecondaryName, answers: make(chan ProbeResult)},
	}
	_, _, err := start(ctx, testConfig(), Options{Stop: func() {}}, func(c Connection, _ Config) prober { return hubs[c.Name] })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// With HUB_SECONDARY_HOST_ENDPOINT unset (or naming the primary) nothing is
// built, nobody is contacted, nothing is registered, and the worker gets the
// primary exactly as configured.
func TestStartFeatureOffTouchesNothing(t *testing.T) {
	endpoint, accepted := hungServer(t, nil) // counts any connection attempt
	primary := Connection{Name: PrimaryName, Endpoint: endpoint, TokenFile: "/a/token", CAFile: "/a/ca.crt"}
	tests := []struct {
		name      string
		secondary Connection
	}{
		{name: "secondary unset", secondary: Connection{Name: SecondaryName, TokenFile: DefaultSecondaryTokenFile, CAFile: DefaultSecondaryCAFile}},
		{name: "secondary equals primary", secondary: Connection{Name: SecondaryName, Endpoint: endpoint + "/", TokenFile: "/b/token", CAFile: "/b/ca.crt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Primary: primary, Secondary: tt.secondary, ClusterName: testCluster, ProjectNamespace: testNamespace}
			if cfg.Enabled() {
				t.Fatal("Enabled() = true")
			}
			reg := prometheus.NewRegistry()
			var built atomic.Int64
			conn, f, err := start(context.Background(), cfg, Options{Registerer: reg}, func(Connection, Config) prober {
				built.Add(1)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if conn != primary {
				t.Errorf("conn = %+v, want the primary %+v", conn, primary)
			}
			if built.Load() != 0 {
				t.Error("a prober was built with the feature off")
			}
			// The public entry point, with the real prober constructor.
			if conn, _, err := Start(context.Background(), cfg, Options{Registerer: reg}); err != nil || conn != primary {
				t.Errorf("Start() = %+v, %v", conn, err)
			}
			if err := waitDone(t, "Run with the feature off", runAsync(f)); err != nil {
				t.Errorf("Run returned %v", err)
			}
			if mfs, _ := reg.Gather(); len(mfs) != 0 {
				t.Errorf("%d metric families registered with the feature off", len(mfs))
			}
			if n := accepted.Load(); n != 0 {
				t.Errorf("%d connections to a hub with the feature off", n)
			}
		})
	}
}

func runAsync(f *Follower) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.Run(context.Background()) }()
	return done
}

// End to end against two fake hub API servers.
func TestStartAgainstHubs(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(a, b *fakeHub)
		primary func(t *testing.T, a *fakeHub) Connection // default: a's own
		want    string
	}{
		{name: "nothing published: primary", setup: func(a, b *fakeHub) {}, want: PrimaryName},
		{name: "both say the secondary leads", want: SecondaryName, setup: func(a, b *fakeHub) {
			a.publish("hub-b", b.Server.URL, "2026-08-25T16:42:00Z")
			b.publish("hub-b", b.Server.URL, "2026-08-25T16:42:00Z")
		}},
		{name: "primary hung, secondary claims itself", want: SecondaryName,
			setup: func(a, b *fakeHub) { b.publish("hub-b", b.Server.URL, "2026-08-25T16:42:00Z") },
			primary: func(t *testing.T, a *fakeHub) Connection {
				c := a.connection(t, PrimaryName)
				c.Endpoint, _ = hungServer(t, nil)
				return c
			}},
		{name: "primary rejects our token, secondary claims itself", want: SecondaryName,
			setup: func(a, b *fakeHub) {
				a.AcceptOnly("rotated")
				b.publish("hub-b", b.Server.URL, "")
			}},
		{name: "secondary claims an endpoint outside the pair: primary", want: PrimaryName,
			setup: func(a, b *fakeHub) { b.publish("evil", "https://evil.example.com", "2026-08-25T16:42:00Z") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFakeHub(t, "token-a"), newFakeHub(t, "token-b")
			cfg := Config{
				Primary: a.connection(t, PrimaryName), Secondary: b.connection(t, SecondaryName),
				ClusterName: testCluster, ProjectNamespace: testNamespace,
				ResolveTimeout: 300 * time.Millisecond, ResolveInterval: time.Second,
			}
			if tt.primary != nil {
				cfg.Primary = tt.primary(t, a)
			}
			tt.setup(a, b)
			reg := prometheus.NewRegistry()
			sink, log := newLogSink()
			conn, f, err := Start(context.Background(), cfg, Options{Log: log, Registerer: reg, Stop: func() {}})
			if err != nil {
				t.Fatal(err)
			}
			want := cfg.Primary
			if tt.want == SecondaryName {
				want = cfg.Secondary
			}
			if conn != want {
				t.Errorf("Start chose %+v, want %+v", conn, want)
			}
			if v := testutil.ToFloat64(f.metrics.active.WithLabelValues(tt.want)); v != 1 {
				t.Errorf("%s{hub=%q} = %v, want 1", metricActive, tt.want, v)
			}
			for _, secret := range []string{"token-a", "token-b", "rotated"} {
				if strings.Contains(sink.all(), secret) {
					t.Errorf("a token appears in the logs:\n%s", sink.all())
				}
			}
		})
	}
}

// Repeated identical answers are logged once; a change of a hub's state is
// logged when it happens.
func TestFollowerLogsStateChangesOnce(t *testing.T) {
	a, b := newFakeHub(t, "token-a"), newFakeHub(t, "token-b")
	b.publish("evil", "https://admin:s3cret@evil.example.com", "")
	cfg := Config{Primary: a.connection(t, PrimaryName), Secondary: b.connection(t, SecondaryName),
		ClusterName: testCluster, ProjectNamespace: testNamespace}
	sink, log := newLogSink()
	_, f, err := Start(context.Background(), cfg, Options{Log: log, Stop: func() {}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		f.poll(context.Background())
	}
	if n := sink.count("Rejected a claim"); n != 1 {
		t.Errorf("rejection logged %d times over 4 identical polls, want 1:\n%s", n, sink.all())
	}
	if strings.Contains(sink.all(), "s3cret") {
		t.Errorf("log leaks the claim's userinfo:\n%s", sink.all())
	}
	a.AcceptOnly("rotated") // the primary now rejects us
	f.poll(context.Background())
	f.poll(context.Background())
	if n := sink.count(`"reason"="unauthorized"`); n != 1 {
		t.Errorf("401 logged %d times over 2 polls, want 1:\n%s", n, sink.all())
	}
	if got := testutil.ToFloat64(f.metrics.probeErrors.WithLabelValues(SecondaryName, reasonRejectedEndpoint)); got != 6 {
		t.Errorf("rejected_endpoint count = %v, want 6 (every poll counts)", got)
	}
}
