package membercred

import (
	"net/http"
	"os"
	"slices"
	"sync"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// ownCredentialRoundTripper feeds an OwnCredentialGuard. It sits in
// WrapTransport, i.e. inside client-go's bearer wrapper, so it sees the
// Authorization that wrapper set.
type ownCredentialRoundTripper struct {
	guard *OwnCredentialGuard
	cred  *ownCredential
	next  http.RoundTripper
}

var _ utilnet.RoundTripperWrapper = (*ownCredentialRoundTripper)(nil)

func (rt *ownCredentialRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	g := rt.guard
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err // says nothing about the credential
	}
	if resp.StatusCode != http.StatusUnauthorized {
		// Only the own credential's success ends a run; checking costs a
		// string compare, and only while a run is open.
		if g.strikes.Load() != 0 && rt.cred.carriedBy(req) {
			g.accepted()
		}
		return resp, nil
	}
	if !rt.cred.carriedBy(req) {
		// Someone else's credential: never re-sent with ours (that would
		// make this process a confused deputy), never counted.
		return resp, nil
	}
	g.metrics.ownSawUnauthorized()
	fresh, ok := rt.cred.newerFileToken(req)
	if !ok {
		g.strike(req.URL.Host) // nothing fresher to try: the credential itself is rejected
		return resp, nil
	}
	replay, ok := replayable(req, rt.next)
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

func (rt *ownCredentialRoundTripper) CancelRequest(req *http.Request) {
	tryCancelRequest(rt.next, req)
}

func (rt *ownCredentialRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

// unrecognisableCredential names the kind of credential on cfg that the
// guard cannot recognise on a request, or returns "". An exec plugin's or
// auth provider's round tripper sits outside WrapTransport and sets a bearer
// token the guard never sees elsewhere; basic auth is not worth the code.
func unrecognisableCredential(cfg *rest.Config) string {
	switch {
	case cfg.ExecProvider != nil:
		return "an exec plugin"
	case cfg.AuthProvider != nil:
		return "an auth provider"
	case cfg.Username != "" || cfg.Password != "":
		return "basic auth"
	}
	return ""
}

// maxFileTokens bounds the token-file values remembered as the own
// credential: client-go's bearer wrapper serves a copy of the file up to a
// minute old, and kubelet rewrites the file at most every few minutes, so
// the last few values cover every token a request can carry.
const maxFileTokens = 4

// ownCredential is what the process's own requests carry.
type ownCredential struct {
	static    string // cfg.BearerToken, "" if none
	tokenFile string // cfg.BearerTokenFile, "" if none
	// none: the config has no bearer credential (client certificate, or
	// anonymous), so its own requests carry no Authorization at all.
	none bool

	mu         sync.Mutex
	fileTokens []string // values read from tokenFile, newest last
}

func newOwnCredential(cfg *rest.Config) *ownCredential {
	c := &ownCredential{static: cfg.BearerToken, tokenFile: cfg.BearerTokenFile}
	c.none = c.static == "" && c.tokenFile == ""
	c.readFile() // what the bearer wrapper starts with; a missing file is read again on the first 401
	return c
}

// carriedBy reports whether req carries the own credential.
func (c *ownCredential) carriedBy(req *http.Request) bool {
	if c.none {
		return req.Header.Get("Authorization") == ""
	}
	bearer := bearerOf(req)
	switch {
	case bearer == "":
		return false
	case bearer == c.static:
		return true
	case c.tokenFile == "":
		return false
	}
	c.mu.Lock()
	known := slices.Contains(c.fileTokens, bearer)
	c.mu.Unlock()
	if known {
		return true
	}
	// kubelet may have rotated the file and the bearer wrapper picked the
	// new value up before this guard saw it.
	current, _ := c.readFile()
	return current == bearer
}

// newerFileToken reads the token file now (client-go's bearer wrapper may be
// serving a copy up to a minute old, kubelet having rotated the file since)
// and returns its token if it differs from the one req carried. The file is
// read on every 401 rather than coalesced: it is a local tmpfs read, and
// 401s are what this guard exists to look at.
func (c *ownCredential) newerFileToken(req *http.Request) (string, bool) {
	token, ok := c.readFile()
	if !ok || token == bearerOf(req) {
		return "", false
	}
	return token, true
}

// readFile reads the token file and remembers its value as own.
func (c *ownCredential) readFile() (string, bool) {
	if c.tokenFile == "" {
		return "", false
	}
	raw, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", false
	}
	token, reason := normalizeToken(raw)
	if reason != "" {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.fileTokens, token) {
		if len(c.fileTokens) == maxFileTokens {
			c.fileTokens = append(c.fileTokens[:0], c.fileTokens[1:]...)
		}
		c.fileTokens = append(c.fileTokens, token)
	}
	return token, true
}
