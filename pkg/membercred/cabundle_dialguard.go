package membercred

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
)

// onlyHTTP1Key marks the context of a request that net/http sends over
// HTTP/1.1 only (a WebSocket upgrade, Request.requiresHTTP1 in net/http):
// a connection dialled for it must not offer h2, as net/http's own TLS
// (addTLS) does not. net/http keeps such connections in a pool of their
// own, so no other request rides them.
type onlyHTTP1Key struct{}

// dialGuard is the outermost round tripper of a config whose connections
// follow a CA bundle. It tells the dial what net/http would have told its
// own TLS and a handshake callback cannot learn:
//   - that a request is a WebSocket upgrade, which needs HTTP/1.1: the
//     direct path's DialTLSContext then offers no h2 and the upgrade gets
//     its 101 from an HTTP/2-capable server, as upstream's does. None of
//     client-go's exec, attach or port-forward paths sends one through this
//     round tripper (the SPDY and WebSocket executors and the port-forward
//     dialers build their own transport from the config), but a proxy
//     given the member config's round tripper would;
//   - which IP address a proxied connection was dialled for. crypto/tls
//     sends no SNI for an IP, so verifyConnection cannot tell it (a
//     redirect may have led elsewhere than rest.Config.Host): for a request
//     to an IP through a proxy, the connection it gets is checked against
//     that IP before a byte of the request (its token) is written, exactly
//     the name crypto/tls would have verified, and closed if it is not
//     valid for it.
//
// Every other request passes as it came, at the cost of a few comparisons.
type dialGuard struct {
	next       http.RoundTripper
	proxy      func(*http.Request) (*url.URL, error)
	serverName string
}

func newDialGuard(next http.RoundTripper, clone *http.Transport) *dialGuard {
	return &dialGuard{next: next, proxy: clone.Proxy, serverName: clone.TLSClientConfig.ServerName}
}

func (g *dialGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if requiresHTTP1(req.Header) {
		ctx = context.WithValue(ctx, onlyHTTP1Key{}, struct{}{})
	}
	var check *addressCheck
	if g.proxiedToIP(req) {
		check = &addressCheck{addr: req.URL.Hostname()}
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: check.gotConn})
	}
	if ctx != req.Context() {
		req = req.WithContext(ctx)
	}
	resp, err := g.next.RoundTrip(req)
	if check != nil {
		if verr := check.err.Load(); verr != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, verr
		}
	}
	return resp, err
}

func (g *dialGuard) WrappedRoundTripper() http.RoundTripper { return g.next }

// proxiedToIP reports whether req goes to an IP address through a proxy
// with no tls-server-name: the one case where verifyConnection has no name.
func (g *dialGuard) proxiedToIP(req *http.Request) bool {
	if g.serverName != "" || g.proxy == nil || req.URL == nil {
		return false
	}
	if _, err := netip.ParseAddr(req.URL.Hostname()); err != nil {
		return false
	}
	proxy, err := g.proxy(req)
	return err == nil && proxy != nil
}

// addressCheck verifies the connection a request got against its IP
// address, from httptrace's GotConn, which net/http (HTTP/1) and its HTTP/2
// client call before they write the request.
type addressCheck struct {
	addr string
	err  atomic.Pointer[tls.CertificateVerificationError]
}

func (c *addressCheck) gotConn(info httptrace.GotConnInfo) {
	tc, ok := info.Conn.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return
	}
	cs := tc.ConnectionState()
	var err error
	if len(cs.PeerCertificates) == 0 {
		err = errors.New("server presented no certificate")
	} else {
		err = cs.PeerCertificates[0].VerifyHostname(c.addr)
	}
	if err != nil {
		c.err.Store(&tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err})
		_ = info.Conn.Close() // the request, and its token, must not be written on it
	}
}

// requiresHTTP1 is net/http's test for a request it sends over HTTP/1.1
// only: an Upgrade to websocket with "upgrade" among the Connection tokens.
func requiresHTTP1(h http.Header) bool {
	if !strings.EqualFold(h.Get("Upgrade"), "websocket") {
		return false
	}
	for _, token := range strings.FieldsFunc(h.Get("Connection"), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if strings.EqualFold(token, "upgrade") {
			return true
		}
	}
	return false
}
