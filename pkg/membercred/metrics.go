package membercred

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric name prefixes. They say "holdfast" so that inside an upstream
// binary's metrics endpoint it is clear these series come from the carried
// patch, not from upstream.
const (
	metricsNamespace = "holdfast"
	memberSubsystem  = "member_credential"
	ownSubsystem     = "own_credential"
)

// Metrics holds the collectors of member credentials (labelled by cluster)
// and of the own-credential guard (unlabelled: a process has one own
// credential). A nil *Metrics records nothing, so every caller may pass
// whatever it was given.
type Metrics struct {
	refreshes             *prometheus.CounterVec
	refreshFailures       *prometheus.CounterVec
	lastRefresh           *prometheus.GaugeVec
	unauthorized          *prometheus.CounterVec
	unauthorizedRecovered *prometheus.CounterVec
	unauthorizedPersisted *prometheus.CounterVec

	ownUnauthorized          prometheus.Counter
	ownUnauthorizedRecovered prometheus.Counter
	ownPersisting            prometheus.Gauge
	ownGuardTripped          prometheus.Counter

	// life is set on a handle made by forCluster and nil on the *Metrics
	// NewMetrics returns.
	life *clusterLife
}

// clusterLife is the lifetime of one member cluster as a Registry sees it,
// from the first source it builds for the cluster to Forget. A source
// outlives Forget in every client built from it and in any read under way,
// so deleting the series once is not enough: the handle is tombstoned, and
// member records through it are dropped from then on.
type clusterLife struct {
	// mu is held shared by every record through the handle and exclusively
	// by forget, so no record can land between the tombstone and the
	// deletion of the series.
	mu        sync.RWMutex
	forgotten bool
}

// NewMetrics creates the collectors and registers them on reg. Registering
// twice on the same registry adopts the collectors already there instead of
// failing, so glue in several places of one binary may each call it.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("membercred: NewMetrics needs a prometheus.Registerer, got nil")
	}
	member := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: memberSubsystem, Name: name, Help: help,
		}, append([]string{"cluster"}, labels...))
	}
	own := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: ownSubsystem, Name: name, Help: help,
		})
	}
	m := &Metrics{
		refreshes: member("refreshes_total",
			"Reads of a member cluster's Secret that yielded a usable bearer token."),
		refreshFailures: member("refresh_failures_total",
			"Reads of a member cluster's Secret that yielded no usable token; the last good token stays in use.", "reason"),
		lastRefresh: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: memberSubsystem, Name: "last_refresh_timestamp_seconds",
			Help: "Unix time the member cluster's token was last confirmed from its Secret.",
		}, []string{"cluster"}),
		unauthorized: member("unauthorized_total",
			"Requests carrying the member cluster's Secret token that got 401 Unauthorized."),
		unauthorizedRecovered: member("unauthorized_recovered_total",
			"401 Unauthorized hidden from the caller by one replay with a token freshly read from the Secret."),
		unauthorizedPersisted: member("unauthorized_persisted_total",
			"401 Unauthorized returned to the caller although the Secret had just been re-read: the Secret holds a token the member rejects."),

		ownUnauthorized: own("unauthorized_total",
			"401 Unauthorized responses to this process's own API server credential."),
		ownUnauthorizedRecovered: own("unauthorized_recovered_total",
			"Own-credential 401 Unauthorized hidden by one replay with a token freshly read from the token file."),
		ownPersisting: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Subsystem: ownSubsystem, Name: "persisting_unauthorized",
			Help: "Current run of own-credential 401 Unauthorized that persisted after re-reading the credential, with no other response in between.",
		}),
		ownGuardTripped: own("guard_tripped_total",
			"Times the own-credential guard reached its threshold and took its action (exit or report unhealthy)."),
	}
	var errs []error
	adopt := func(c prometheus.Collector) prometheus.Collector {
		existing, err := registerOrAdopt(reg, c)
		if err != nil {
			errs = append(errs, err)
		}
		return existing
	}
	m.refreshes = adopt(m.refreshes).(*prometheus.CounterVec)
	m.refreshFailures = adopt(m.refreshFailures).(*prometheus.CounterVec)
	m.lastRefresh = adopt(m.lastRefresh).(*prometheus.GaugeVec)
	m.unauthorized = adopt(m.unauthorized).(*prometheus.CounterVec)
	m.unauthorizedRecovered = adopt(m.unauthorizedRecovered).(*prometheus.CounterVec)
	m.unauthorizedPersisted = adopt(m.unauthorizedPersisted).(*prometheus.CounterVec)
	m.ownUnauthorized = adopt(m.ownUnauthorized).(prometheus.Counter)
	m.ownUnauthorizedRecovered = adopt(m.ownUnauthorizedRecovered).(prometheus.Counter)
	m.ownPersisting = adopt(m.ownPersisting).(prometheus.Gauge)
	m.ownGuardTripped = adopt(m.ownGuardTripped).(prometheus.Counter)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("membercred: registering metrics: %w", err)
	}
	return m, nil
}

// MustNewMetrics is NewMetrics that panics on error, for package-level vars.
func MustNewMetrics(reg prometheus.Registerer) *Metrics {
	m, err := NewMetrics(reg)
	if err != nil {
		panic(err)
	}
	return m
}

// registerOrAdopt registers c, or returns the equal collector already
// registered. Any other error (a clash with a different collector of the same
// name) returns c unregistered together with the error.
func registerOrAdopt(reg prometheus.Registerer, c prometheus.Collector) (prometheus.Collector, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) && sameKind(already.ExistingCollector, c) {
		return already.ExistingCollector, nil
	}
	return c, err
}

func sameKind(a, b prometheus.Collector) bool {
	switch b.(type) {
	case *prometheus.CounterVec:
		_, ok := a.(*prometheus.CounterVec)
		return ok
	case *prometheus.GaugeVec:
		_, ok := a.(*prometheus.GaugeVec)
		return ok
	case prometheus.Gauge:
		_, ok := a.(prometheus.Gauge)
		return ok
	case prometheus.Counter:
		_, ok := a.(prometheus.Counter)
		return ok
	}
	return false
}

// Forget deletes every series of a removed member cluster, so a deleted
// cluster does not linger in dashboards or keep alerts firing. A source that
// still records afterwards brings its series back: a Registry's Forget also
// stops its sources of the cluster from recording; use that where sources
// may outlive the cluster.
func (m *Metrics) Forget(cluster string) {
	if m == nil {
		return
	}
	match := prometheus.Labels{"cluster": cluster}
	m.refreshes.DeletePartialMatch(match)
	m.refreshFailures.DeletePartialMatch(match)
	m.lastRefresh.DeletePartialMatch(match)
	m.unauthorized.DeletePartialMatch(match)
	m.unauthorizedRecovered.DeletePartialMatch(match)
	m.unauthorizedPersisted.DeletePartialMatch(match)
}

// forCluster returns a handle on m's collectors for the sources of one
// member cluster; forget ends it. nil stays nil.
func (m *Metrics) forCluster() *Metrics {
	if m == nil {
		return nil
	}
	h := *m
	h.life = &clusterLife{}
	return &h
}

// forget tombstones a handle made by forCluster and deletes the cluster's
// series, in that order under the handle's lock: a record through the handle
// either lands before the deletion (and is deleted) or is dropped.
func (m *Metrics) forget(cluster string) {
	if m == nil {
		return
	}
	if m.life == nil {
		m.Forget(cluster)
		return
	}
	m.life.mu.Lock()
	defer m.life.mu.Unlock()
	m.life.forgotten = true
	m.Forget(cluster)
}

// member runs record unless m is nil or forgotten.
func (m *Metrics) member(record func()) {
	if m == nil {
		return
	}
	if m.life != nil {
		m.life.mu.RLock()
		defer m.life.mu.RUnlock()
		if m.life.forgotten {
			return
		}
	}
	record()
}

func (m *Metrics) refreshed(cluster string, at time.Time) {
	m.member(func() {
		m.refreshes.WithLabelValues(cluster).Inc()
		m.setLastRefresh(cluster, at)
	})
}

// confirmed records when the token in use was last known to match the Secret.
func (m *Metrics) confirmed(cluster string, at time.Time) {
	m.member(func() { m.setLastRefresh(cluster, at) })
}

func (m *Metrics) setLastRefresh(cluster string, at time.Time) {
	m.lastRefresh.WithLabelValues(cluster).Set(float64(at.UnixNano()) / 1e9)
}

func (m *Metrics) refreshFailed(cluster, reason string) {
	m.member(func() { m.refreshFailures.WithLabelValues(cluster, reason).Inc() })
}

func (m *Metrics) memberUnauthorized(cluster string) {
	m.member(func() { m.unauthorized.WithLabelValues(cluster).Inc() })
}

func (m *Metrics) memberRecovered(cluster string) {
	m.member(func() { m.unauthorizedRecovered.WithLabelValues(cluster).Inc() })
}

func (m *Metrics) memberPersisted(cluster string) {
	m.member(func() { m.unauthorizedPersisted.WithLabelValues(cluster).Inc() })
}

func (m *Metrics) ownSawUnauthorized() {
	if m == nil {
		return
	}
	m.ownUnauthorized.Inc()
}

func (m *Metrics) ownRecovered() {
	if m == nil {
		return
	}
	m.ownUnauthorizedRecovered.Inc()
}

func (m *Metrics) ownStreak(n int) {
	if m == nil {
		return
	}
	m.ownPersisting.Set(float64(n))
}

func (m *Metrics) ownTripped() {
	if m == nil {
		return
	}
	m.ownGuardTripped.Inc()
}
