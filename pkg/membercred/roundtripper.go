package membercred

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/transport"
)

// WrapTransport puts the member cluster's current token on every request
// that does not already carry an Authorization header. It is a
// transport.WrapperFunc: use it as cfg.Wrap(src.WrapTransport), with
// cfg.BearerToken left empty (client-go's own bearer wrapper sits outside
// WrapTransport and would otherwise set the frozen token first).
//
// On a 401 it forces a coalesced re-read of the Secret; if that yields a
// token other than the one the request was sent with, and the request can be
// replayed, the 401 is discarded and the request is sent once more with the
// new token. Otherwise the 401 is returned untouched. A request is never sent
// more than twice.
//
// Exec, attach and port-forward requests go through single-use upgrade round
// trippers (SPDY, WebSocket) that client-go builds from the same rest.Config;
// they are never replayed, whatever wraps them (replayable says how).
func (s *SecretTokenSource) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &memberTokenRoundTripper{source: s, next: rt, singleUse: singleUseTransport(rt)}
}

var _ transport.WrapperFunc = (*SecretTokenSource)(nil).WrapTransport

// memberTokenRoundTripper is the member side; OwnCredentialGuard looks for
// this type to refuse being installed next to it.
type memberTokenRoundTripper struct {
	source *SecretTokenSource
	next   http.RoundTripper
	// singleUse is set when next is (or wraps) an upgrade round tripper,
	// which keeps the connection of one request: nothing is replayed.
	singleUse bool
}

var _ utilnet.RoundTripperWrapper = (*memberTokenRoundTripper)(nil)

func (rt *memberTokenRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// An explicit Authorization wins, as in every client-go auth round
	// tripper (it is how --token and rest.Config.BearerToken override).
	if req.Header.Get("Authorization") != "" {
		return rt.next.RoundTrip(req)
	}
	s := rt.source
	tok, err := s.token(req.Context())
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := rt.next.RoundTrip(withAuthorization(req, tok.header))
	if err != nil {
		if upgradeUnauthorized(err) {
			// The WebSocket round tripper reports a 401 as an error. Nothing
			// to replay, but the next stream should carry a fresh token.
			// Only an upgrade round tripper returns this error, so it needs
			// no recognising of the chain, which a wrapper may hide.
			s.metrics.memberUnauthorized(s.cluster)
			s.startUnauthorizedRead(tok)
		}
		return nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized {
		s.noteAccepted()
		return resp, nil
	}
	return rt.onUnauthorized(req, tok, resp)
}

// onUnauthorized is where this goes beyond client-go's
// ResettableTokenSourceWrapTransport, which resets its cache on a 401 but
// still fails the request: for an informer that is a failed LIST/WATCH plus
// reflector backoff per rotation, here it is one extra round trip.
func (rt *memberTokenRoundTripper) onUnauthorized(req *http.Request, sent *cachedToken, resp *http.Response) (*http.Response, error) {
	s := rt.source
	s.metrics.memberUnauthorized(s.cluster)
	if rt.singleUse || upgradeRequest(req) {
		// Start the read for the next stream, but do not hold this one up:
		// it cannot be replayed anyway.
		s.startUnauthorizedRead(sent)
		return resp, nil
	}
	fresh, err := s.tokenAfterUnauthorized(req.Context(), sent)
	if err != nil {
		// The read failed, took too long or the caller gave up: nothing is
		// known about the Secret's token, so this is not counted as a
		// rejected one (a failed read is logged and counted by the read).
		// The 401 is returned intact.
		return resp, nil
	}
	if fresh.token == sent.token {
		s.notePersisted401() // the Secret itself holds the rejected token
		return resp, nil
	}
	return replayWithFresh(rt.next, req, resp, fresh.header, s)
}

// singleUseTransport reports whether rt is, or visibly wraps, one of
// client-go's upgrade round trippers. A wrapper that hides its inner round
// tripper hides it from this check too; replayable does not rely on it.
func singleUseTransport(rt http.RoundTripper) bool {
	return classifyChain(rt) == chainSingleUse
}

// upgradeUnauthorized reports whether err is an upgrade refused with 401.
func upgradeUnauthorized(err error) bool {
	var upgrade *httpstream.UpgradeFailureError
	return errors.As(err, &upgrade) && apierrors.IsUnauthorized(upgrade.Cause)
}

func (rt *memberTokenRoundTripper) CancelRequest(req *http.Request) {
	tryCancelRequest(rt.next, req)
}

func (rt *memberTokenRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }
