package hubfollow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. The first two are upstream's HA branch's and are a contract:
// labels may be added, names never change.
const (
	metricSwitches           = "kubeslice_worker_hub_switches_total"
	metricProbeErrors        = "kubeslice_worker_hub_probe_errors_total"
	metricCredentialAccepted = "kubeslice_worker_hub_credential_accepted"
	metricActive             = "kubeslice_worker_hub_active"
	metricClaimState         = "kubeslice_worker_hub_claim_state"
)

// The states of metricClaimState: what the last round of reads of both hubs
// found in status.activeController.
const (
	// claimStateClaim: a hub published a usable claim.
	claimStateClaim = "claim"
	// claimStateNoClaim: at least one hub answered and none published
	// anything. Every hub running a released KubeSlice controller looks
	// like this (kubeslice/apis v0.5.0's Cluster has no
	// status.activeController), and then the worker can never switch.
	claimStateNoClaim = "no_claim"
	// claimStateRejected: the only claims published named an endpoint
	// outside the configured pair.
	claimStateRejected = "rejected"
	// claimStateNoAnswer: no hub answered usably (unreachable, timeout,
	// credential rejected, no Cluster, malformed).
	claimStateNoAnswer = "no_answer"
)

var claimStates = []string{claimStateClaim, claimStateNoClaim, claimStateRejected, claimStateNoAnswer}

const claimStateHelp = "1 for what the last round of reads of both hubs found in status.activeController (claim, no_claim: no hub publishes one, rejected: only claims outside the configured hubs, no_answer), 0 for the other states."

// reasonRejectedEndpoint is the probe-error reason for a claim naming an
// endpoint outside the configured pair; the other reasons are ProbeKind names.
const reasonRejectedEndpoint = "rejected_endpoint"

// probeErrorReasons are pre-created at zero so rate() and absent() alerts
// work before the first error.
var probeErrorReasons = []string{
	ProbeUnreachable.String(),
	ProbeTimeout.String(),
	ProbeUnauthorized.String(),
	ProbeForbidden.String(),
	ProbeNotFound.String(),
	ProbeMalformed.String(),
	ProbeCredentialUnavailable.String(),
	reasonRejectedEndpoint,
}

type metrics struct {
	switches           prometheus.Counter
	probeErrors        *prometheus.CounterVec
	credentialAccepted *prometheus.GaugeVec
	active             *prometheus.GaugeVec
	claimState         *prometheus.GaugeVec
}

// newMetrics creates the follower's metrics and registers them on reg (the
// worker passes controller-runtime's metrics.Registry so they appear on its
// existing /metrics). A nil reg leaves them unregistered. Registering twice
// on one registry reuses the first collectors rather than failing.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		switches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricSwitches,
			Help: "Confirmed changes of the active hub; each one stops the worker so it restarts against the new hub.",
		}),
		probeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricProbeErrors,
			Help: "Reads of the worker's Cluster CR on a hub that produced no usable answer, by hub slot and reason.",
		}, []string{"hub", "reason"}),
		credentialAccepted: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metricCredentialAccepted,
			Help: "1 if the hub accepted this worker's credential on the last probe that reached it, 0 if it rejected it or it could not be loaded; absent until known.",
		}, []string{"hub"}),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metricActive,
			Help: "1 for the hub this worker process connected to, 0 for the other.",
		}, []string{"hub"}),
	}
	m.claimState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: metricClaimState,
		Help: claimStateHelp,
	}, []string{"state"})
	for _, s := range claimStates {
		m.claimState.WithLabelValues(s)
	}
	for _, hub := range []string{PrimaryName, SecondaryName} {
		for _, reason := range probeErrorReasons {
			m.probeErrors.WithLabelValues(hub, reason)
		}
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.switches, err = register(reg, m.switches); err != nil {
		return nil, err
	}
	if m.probeErrors, err = register(reg, m.probeErrors); err != nil {
		return nil, err
	}
	if m.credentialAccepted, err = register(reg, m.credentialAccepted); err != nil {
		return nil, err
	}
	if m.active, err = register(reg, m.active); err != nil {
		return nil, err
	}
	if m.claimState, err = register(reg, m.claimState); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// the same description.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// observeProbe records one probe's outcome.
func (m *metrics) observeProbe(r ProbeResult) {
	if r.Kind.failed() {
		m.probeErrors.WithLabelValues(r.Hub, r.Kind.String()).Inc()
	}
	if accepted, known := r.Kind.credentialAccepted(); known {
		v := 0.0
		if accepted {
			v = 1
		}
		m.credentialAccepted.WithLabelValues(r.Hub).Set(v)
	}
}

func (m *metrics) observeRejection(publisher string) {
	m.probeErrors.WithLabelValues(publisher, reasonRejectedEndpoint).Inc()
}

func (m *metrics) setActive(hub string) {
	for _, h := range []string{PrimaryName, SecondaryName} {
		v := 0.0
		if h == hub {
			v = 1
		}
		m.active.WithLabelValues(h).Set(v)
	}
}

// setClaimState sets state's series to 1 and the others to 0.
func (m *metrics) setClaimState(state string) {
	for _, s := range claimStates {
		v := 0.0
		if s == state {
			v = 1
		}
		m.claimState.WithLabelValues(s).Set(v)
	}
}
