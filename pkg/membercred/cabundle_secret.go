package membercred

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// TrustSecretCABundle makes cfg verify the member's serving certificate
// against the CA bundle the cluster Secret holds now, instead of the copy in
// cfg.TLSClientConfig.CAData, which BuildClusterConfig read from that Secret
// and which stays frozen for the client's life. The source reads the bundle
// in the same Secret read as the token (no extra request), a verification
// failure makes it read the Secret at once (as a 401 does), and a bundle
// that withdraws a certificate closes the member's connections.
//
// Call it after BuildClusterConfig has set TLS and proxy: cfg's CAData is
// the first bundle (it costs no read; another bundle than the one the
// source holds makes it re-read the Secret). cfg is left exactly as it is,
// upstream behaviour included, when it skips verification, has no CAData,
// a CAFile, or CAData without a certificate (client-go then fails to
// build the client, as upstream does).
func (s *SecretTokenSource) TrustSecretCABundle(cfg *rest.Config) {
	tc := cfg.TLSClientConfig
	if tc.Insecure || tc.CAFile != "" || len(tc.CAData) == 0 {
		return
	}
	snap, detail := parseCABundle(tc.CAData)
	if detail != "" {
		return
	}
	s.adoptCA(snap)
	host := cfg.Host
	inner := cfg.WrapTransport
	// Innermost, so that the wrappers BuildClusterConfig added (Karmada's
	// proxy-header wrapper type-asserts *http.Transport) and the token
	// wrapper see the transport whose roots follow the Secret.
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = s.ca.wrap(rt, host)
		if inner != nil {
			rt = inner(rt)
		}
		return rt
	}
}

// adoptCA takes the bundle a caller just read from the Secret: the first
// one becomes current; a later one other than current makes the source
// read the Secret itself rather than trust either copy (see adopt).
func (s *SecretTokenSource) adoptCA(snap *caSnapshot) {
	s.mu.Lock()
	cur := s.ca.current.Load()
	if cur == nil {
		s.ca.current.Store(snap)
	}
	s.mu.Unlock()
	if cur != nil && !bytes.Equal(cur.raw, snap.raw) {
		s.startRead(readChanged)
	}
}

// caOutcome is what one Secret read says about the CA bundle.
type caOutcome struct {
	snap           *caSnapshot // the bundle read, nil unless usable
	reason, detail string      // why not
}

// caFromSecret reads the bundle of a Secret read, for a source that tracks
// one. A failed read says nothing about the bundle (the token's reason
// reports it). Callers hold s.mu.
func (s *SecretTokenSource) caFromSecret(secret *corev1.Secret, getErr error) (caOutcome, bool) {
	if s.ca.current.Load() == nil || getErr != nil || secret == nil {
		return caOutcome{}, false
	}
	raw, ok := secret.Data[SecretCABundleKey]
	if !ok {
		// Upstream's BuildClusterConfig refuses to build a client from such a
		// Secret and its existing clients keep their bundle: so do these.
		return caOutcome{reason: ReasonCABundleMissing, detail: fmt.Sprintf("has no %q key", SecretCABundleKey)}, true
	}
	if cur := s.ca.current.Load(); bytes.Equal(cur.raw, raw) {
		return caOutcome{snap: cur}, true // the common case: nothing to parse
	}
	snap, detail := parseCABundle(raw)
	if detail != "" {
		return caOutcome{reason: ReasonCABundleInvalid, detail: fmt.Sprintf("has a %q value that %s", SecretCABundleKey, detail)}, true
	}
	return caOutcome{snap: snap}, true
}

// applyCA publishes a read's bundle and records the change of state, one
// log line per change (never per read). It runs outside s.mu: closing the
// member's connections must not hold up requests.
func (s *SecretTokenSource) applyCA(out caOutcome) {
	if out.snap != nil && s.ca.set(out.snap) {
		s.log.Info("Picked up a changed member cluster CA bundle from its Secret", "certificates", len(out.snap.certs))
	}
	s.mu.Lock()
	prevReason := s.caReason
	if out.reason == "" {
		s.caError, s.caReason, s.caFailures = "", "", 0
	} else {
		s.caError, s.caReason = out.detail, out.reason
		s.caFailures++
	}
	s.mu.Unlock()
	switch {
	case out.reason != "":
		s.metrics.refreshFailed(s.cluster, out.reason)
		if out.reason != prevReason {
			s.log.Error(errors.New(out.detail), "Cannot take the member cluster CA bundle from its Secret; keeping the last good bundle", "reason", out.reason)
		}
	case prevReason != "":
		s.log.Info("Member cluster CA bundle is usable in its Secret again", "previousReason", prevReason)
	}
}

// caAfterFailure answers a handshake whose certificate failed verification
// against failed: it returns the bundle current after a read of the Secret
// that a failure of the same bundle started (coalesced with every other
// such failure, and at most one per MinForcedRefreshInterval), or failed
// when none completed within MaxReadWait. Like a 401 of a token, a failure
// is never answered by a read that another cause started: it may have read
// the Secret before the CA was replaced.
func (s *SecretTokenSource) caAfterFailure(failed *caSnapshot) *caSnapshot {
	var dl readDeadline
	defer dl.stop()
	for range 3 {
		read, answers := s.startCAFailureRead(failed)
		if err := s.wait(context.Background(), read, &dl); err != nil {
			return failed
		}
		if answers {
			return s.ca.current.Load()
		}
	}
	return failed
}

func (s *SecretTokenSource) startCAFailureRead(failed *caSnapshot) (read *secretRead, answers bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ca.current.Load() != failed {
		return alreadyDone, true
	}
	if s.inFlight != nil {
		return s.inFlight, s.inFlight.caRejected == failed
	}
	if lr := s.lastRead; lr != nil && lr.caRejected == failed && s.clock.Now().Sub(lr.completed) < MinForcedRefreshInterval {
		return lr, true
	}
	return s.launchRead("", failed), true
}
