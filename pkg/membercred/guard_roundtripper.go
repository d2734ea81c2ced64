package membercred

import (
	"net/http"
	"os"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ownCredentialRoundTripper feeds an OwnCredentialGuard. It sits in
// WrapTransport, i.e. inside client-go's bearer wrapper, so it sees the
// Authorization that wrapper set.
type ownCredentialRoundTripper struct {
	guard *OwnCredentialGuard
	// tokenFile is the config's BearerTokenFile, "" when the credential
	// cannot be re-read here.
	tokenFile string
	next      http.RoundTripper
}

var _ utilnet.RoundTripperWrapper = (*ownCredentialRoundTripper)(nil)

func (rt *ownCredentialRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	g := rt.guard
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err // says nothing about the credential
	}
	if resp.StatusCode != http.StatusUnauthorized {
		g.accepted()
		return resp, nil
	}
	g.metrics.ownSawUnauthorized()
	fresh, ok := rt.newerFileToken(req)
	if !ok {
		g.strike(req.URL.Host) // nothing fresher to try: the credential itself is rejected
		return resp, nil
	}
	replay, ok := replayable(req)
	if !ok {
		// Not a strike: a fresher token exists, and client-go's bearer
		// wrapper re-reads the file within a minute for later requests.
		return resp, nil
	}
	discard(resp)
	resp, err = rt.next.RoundTrip(withAuthorization(replay, "Bearer "+fresh))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		g.strike(req.URL.Host)
		return resp, nil
	}
	g.metrics.ownRecovered()
	g.accepted()
	return resp, nil
}

// newerFileToken reads the token file now (client-go's bearer wrapper may be
// serving a copy up to a minute old, kubelet having rotated the file since)
// and returns its token if it differs from the one req carried. The file is
// read on every 401 rather than coalesced: it is a local tmpfs read, and
// 401s are what this guard exists to look at.
func (rt *ownCredentialRoundTripper) newerFileToken(req *http.Request) (string, bool) {
	if rt.tokenFile == "" {
		return "", false
	}
	raw, err := os.ReadFile(rt.tokenFile)
	if err != nil {
		return "", false
	}
	token, reason := normalizeToken(raw)
	if reason != "" || token == bearerOf(req) {
		return "", false
	}
	return token, true
}

func (rt *ownCredentialRoundTripper) CancelRequest(req *http.Request) {
	tryCancelRequest(rt.next, req)
}

func (rt *ownCredentialRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }
