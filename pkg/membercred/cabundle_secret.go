package membercred

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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
	if tc.Insecure {
		// The cluster no longer verifies its member (insecureSkipTLSVerification,
		// with its caBundle usually removed): clients built before keep their
		// bundle, and a Secret without one is no longer a failure to report.
		s.caOff.Store(true)
		return
	}
	if tc.CAFile != "" || len(tc.CAData) == 0 {
		return
	}
	// The common case, a client built again from an unchanged Secret, costs
	// a comparison, not a parse of the bundle.
	if cur := s.ca.current.Load(); cur == nil || !bytes.Equal(cur.raw, tc.CAData) {
		snap, detail := parseCABundle(tc.CAData)
		if detail != "" {
			return
		}
		s.adoptCA(snap)
	}
	s.caOff.Store(false)
	s.ca.install(cfg, nil)
}

// adoptCA takes the bundle a caller just read from the Secret. The first
// one becomes current. A later one other than current may be older or
// newer than it (the caller's read and the source's last one raced), so
// until a read that starts now says which, the member's connections trust
// only what both hold: a client never trusts a certificate that the config
// it was built from no longer holds (nor one a read already withdrew). A
// read under way fetched the Secret before this call: its bundle is not
// taken, and another read follows it (see read).
func (s *SecretTokenSource) adoptCA(snap *caSnapshot) {
	s.caMu.Lock()
	cur := s.ca.current.Load()
	switch {
	case cur == nil:
		s.ca.current.Store(snap)
	case !bytes.Equal(cur.raw, snap.raw):
		s.caGen.Add(1)
		s.ca.set(cur.intersect(snap))
	default:
		s.caMu.Unlock()
		return
	}
	s.caMu.Unlock()
	if cur == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight == nil {
		s.launchRead("", nil)
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
	if !ok && s.caOff.Load() {
		return caOutcome{}, true // nothing to report: see TrustSecretCABundle
	}
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

// applyCA publishes the bundle of a read started at CA generation gen and
// records the change of state, one log line per change (never per read).
// A read that started before a config brought another bundle is dropped:
// it may have fetched the Secret before that bundle was written. It runs
// outside s.mu: closing the member's connections must not hold up
// requests.
func (s *SecretTokenSource) applyCA(out caOutcome, gen uint64) {
	s.caMu.Lock()
	defer s.caMu.Unlock()
	if gen != s.caGen.Load() {
		return
	}
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
	case prevReason != "" && out.snap != nil:
		s.log.Info("Member cluster CA bundle is usable in its Secret again", "previousReason", prevReason)
	}
}

// caAfterFailure answers a handshake whose certificate failed verification
// against failed: it returns, never past ctx, the bundle current after a read of the Secret
// that a failure of the same bundle started (coalesced with every other
// such failure, and at most one per MinForcedRefreshInterval), or failed
// when none completed within MaxReadWait. Like a 401 of a token, a failure
// is never answered by a read that another cause started: it may have read
// the Secret before the CA was replaced.
func (s *SecretTokenSource) caAfterFailure(ctx context.Context, failed *caSnapshot) *caSnapshot {
	var dl readDeadline
	defer dl.stop()
	for range 3 {
		read, answers := s.startCAFailureRead(failed)
		if err := s.wait(ctx, read, &dl); err != nil {
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
