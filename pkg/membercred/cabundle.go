package membercred

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// Reasons a CA bundle is not taken. They share the `reason` label of
// refresh_failures_total with the token's reasons.
const (
	ReasonCABundleMissing = "ca_bundle_missing" // the Secret has no SecretCABundleKey
	ReasonCABundleInvalid = "ca_bundle_invalid" // the value holds no usable certificate
)

const (
	// SecretCABundleKey is the key holding the member API server's CA bundle
	// in a Karmada cluster Secret (clusterv1alpha1.SecretCADataKey upstream).
	SecretCABundleKey = "caBundle"

	// MaxCABundleBytes is the largest bundle parsed. The API server refuses
	// a Secret over 1 MiB, so only a broken getter or file hands over more,
	// and parsing it would cost every read.
	MaxCABundleBytes = 1 << 20
)

// caSnapshot is one parsed bundle, immutable once published.
type caSnapshot struct {
	raw   []byte
	certs []*x509.Certificate
	pool  *x509.CertPool
}

// parseCABundle takes the certificates of raw as client-go's rootCertPool
// does (x509.CertPool.AppendCertsFromPEM: CERTIFICATE blocks without
// headers, skipping what does not parse) and refuses a bundle that yields
// none. detail describes a refusal without quoting any of raw: a caBundle
// key that holds a private key by mistake must not reach a log line.
func parseCABundle(raw []byte) (snap *caSnapshot, detail string) {
	switch {
	case len(raw) > MaxCABundleBytes:
		return nil, fmt.Sprintf("is %d bytes, more than the %d a Secret can hold", len(raw), MaxCABundleBytes)
	case len(bytes.TrimSpace(raw)) == 0:
		return nil, "is empty"
	}
	var certs []*x509.Certificate
	var blocks, keys, unparsable int
	for rest := raw; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		blocks++
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			if strings.HasSuffix(block.Type, "PRIVATE KEY") {
				keys++
			}
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			unparsable++
			continue
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		switch {
		case blocks == 0:
			return nil, "holds no PEM block"
		case keys > 0:
			return nil, fmt.Sprintf("holds no certificate but %d private key(s) among %d PEM block(s)", keys, blocks)
		default:
			return nil, fmt.Sprintf("holds no usable certificate among %d PEM block(s) (%d unparsable)", blocks, unparsable)
		}
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &caSnapshot{raw: bytes.Clone(raw), certs: certs, pool: pool}, ""
}

// drops reports whether next no longer holds a certificate of s: a
// connection verified by it may ride on an authority that was withdrawn.
// A bundle that only gains certificates (the new CA published beside the
// old one before the server switches) leaves every connection valid.
func (s *caSnapshot) drops(next *caSnapshot) bool {
	kept := make(map[string]bool, len(next.certs))
	for _, c := range next.certs {
		kept[string(c.Raw)] = true
	}
	for _, c := range s.certs {
		if !kept[string(c.Raw)] {
			return true
		}
	}
	return false
}

// verify is crypto/tls's own server certificate check (verifyServerCertificate
// with RootCAs = this bundle), for the handshakes crypto/tls cannot be given
// the current bundle in time (see caTrust.wrap).
func (s *caSnapshot) verify(cs tls.ConnectionState, name string, now time.Time) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: server presented no certificate")
	}
	opts := x509.VerifyOptions{Roots: s.pool, CurrentTime: now, DNSName: name, Intermediates: x509.NewCertPool()}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
	}
	return nil
}

// intersect returns the bundle of the certificates both s and next hold:
// what a source trusts while it cannot tell which of two bundles is the
// more recent. It is s when next holds all of s, next when s holds all of
// next, and otherwise a new bundle (possibly of no certificate, which
// verifies nothing until a read settles it).
func (s *caSnapshot) intersect(next *caSnapshot) *caSnapshot {
	switch {
	case !s.drops(next):
		return s
	case !next.drops(s):
		return next
	}
	inNext := make(map[string]bool, len(next.certs))
	for _, c := range next.certs {
		inNext[string(c.Raw)] = true
	}
	both := &caSnapshot{pool: x509.NewCertPool()}
	for _, c := range s.certs {
		if inNext[string(c.Raw)] {
			both.certs = append(both.certs, c)
			both.pool.AddCert(c)
			both.raw = append(both.raw, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
	}
	return both
}

// caTrust is the CA bundle one member's connections are verified against,
// and the connections verified by it. Its owner (a SecretTokenSource, a
// CAFile) publishes bundles with set and answers refresh: called after a
// verification failure with the bundle that failed, it re-reads the
// bundle's origin (single flight, rate-limited, at most MaxReadWait and
// never past ctx) and returns the bundle current afterwards.
type caTrust struct {
	current atomic.Pointer[caSnapshot]
	tracker *connrotation.ConnectionTracker
	refresh func(ctx context.Context, failed *caSnapshot) *caSnapshot

	// mu guards last: clients of one member built from equal configs get one
	// cached base transport from client-go, and get one clone of it here,
	// so they share a connection pool as they do upstream.
	mu   sync.Mutex
	last struct {
		base  *http.Transport
		host  string
		clone *http.Transport
	}
}

func newCATrust(refresh func(context.Context, *caSnapshot) *caSnapshot) *caTrust {
	return &caTrust{tracker: connrotation.NewConnectionTracker(), refresh: refresh}
}

// set publishes snap unless it equals the current bundle. It closes every
// connection of the member when snap drops a certificate of the bundle it
// replaces, as client-go's certificate rotation closes them when a client
// certificate changes; informers re-watch from their resourceVersion.
func (t *caTrust) set(snap *caSnapshot) (changed bool) {
	prev := t.current.Load()
	if prev != nil && bytes.Equal(prev.raw, snap.raw) {
		return false
	}
	t.current.Store(snap)
	if prev != nil && prev.drops(snap) {
		t.tracker.CloseAll()
	}
	return true
}

// install makes cfg's connections verified against the current bundle:
// the clone of client-go's transport innermost (Karmada's proxy-header
// wrapper type-asserts *http.Transport; around, if any, goes right outside
// it), and the dial guard outermost, outside the wrappers cfg already has
// (the token's among them), so that every request carrying the member's
// credential passes it.
func (t *caTrust) install(cfg *rest.Config, around func(http.RoundTripper) http.RoundTripper) {
	host := cfg.Host
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		clone := t.wrap(rt, host)
		if clone != nil {
			rt = clone
			if around != nil {
				rt = around(rt)
			}
		}
		if inner != nil {
			rt = inner(rt)
		}
		if clone != nil {
			rt = newDialGuard(rt, clone)
		}
		return rt
	}
}

// wrap returns a clone of rt's *http.Transport with its server verification
// taken from the current bundle, for a client of host (rest.Config.Host),
// or nil for any other round tripper (client-go's SPDY and WebSocket
// upgraders build their own TLS from the config and verify against its
// CAData, as upstream does) and for one that skips verification.
//
// The copy keeps everything client-go set up (proxy, timeouts, HTTP/2, the
// tls-server-name, minimum version, ciphers) and changes where the roots
// come from:
//   - a direct connection is dialled by DialTLSContext, which hands
//     crypto/tls the current bundle as RootCAs per connection: crypto/tls
//     verifies exactly as for a static CAData (the name is the
//     tls-server-name or the host dialled), and on failure the bundle is
//     re-read and the connection dialled once more if it changed;
//   - through a proxy, net/http does the TLS itself with TLSClientConfig,
//     fixed for the transport's life; there verification is
//     InsecureSkipVerify plus VerifyConnection running the same x509 check
//     against the current bundle, never skipped and never on system roots
//     (see verifyConnection for the name).
//
// Every connection is dialled through one connrotation tracker per member,
// which set uses to close them.
func (t *caTrust) wrap(rt http.RoundTripper, host string) *http.Transport {
	base, ok := rt.(*http.Transport)
	if !ok || base.TLSClientConfig == nil || base.TLSClientConfig.InsecureSkipVerify {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last.base == base && t.last.host == host {
		return t.last.clone
	}
	clone := repooled(base.Clone(), base, t.tracker)
	dial := clone.DialContext // tracked

	direct := clone.TLSClientConfig.Clone()
	clone.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return t.dialTLS(ctx, dial, direct, clone.TLSHandshakeTimeout, network, addr)
	}
	proxied := clone.TLSClientConfig
	proxied.RootCAs = nil
	proxied.InsecureSkipVerify = true
	proxied.VerifyConnection = t.verifyConnection(proxied.ServerName, proxied.Time)

	t.last.base, t.last.host, t.last.clone = base, host, clone
	return clone
}

// tlsHandshakeTimeoutError is net/http's error for a handshake that outlived
// Transport.TLSHandshakeTimeout (unexported there), so that a direct
// connection's timeout reads in a Cluster condition or a log exactly as
// upstream's: "net/http: TLS handshake timeout", a timeout net.Error.
type tlsHandshakeTimeoutError struct{}

func (tlsHandshakeTimeoutError) Timeout() bool   { return true }
func (tlsHandshakeTimeoutError) Temporary() bool { return true }
func (tlsHandshakeTimeoutError) Error() string   { return "net/http: TLS handshake timeout" }

// dialTLS dials addr and does the handshake with the current bundle as
// RootCAs. A certificate that the bundle does not verify makes the origin
// re-read it; if that yields another bundle, a new connection (dialled after
// the bundle change closed the old ones) is tried with it, once. The
// handshakes and the wait for the re-read share one deadline, timeout after
// the first dial (net/http's bound for one handshake), and ctx: a failed
// verification never makes a dial outlast what upstream's may.
func (t *caTrust) dialTLS(ctx context.Context, dial connrotation.DialFunc, tmpl *tls.Config, timeout time.Duration, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	for attempt := 0; ; attempt++ {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if attempt == 0 && timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		// Loaded after the dial tracked the connection: set publishes before
		// it closes the tracked ones, so a connection is either closed by a
		// change or verified by the bundle that change published.
		snap := t.current.Load()
		conn, retry, err := t.handshake(ctx, deadline, raw, snap, tmpl, host, attempt == 0)
		if err == nil || !retry {
			return conn, err
		}
	}
}

// handshake does one handshake of dialTLS on raw with snap, before deadline
// (none if zero); on a verification failure that another bundle may cure,
// and if first, it has the origin re-read and says whether to dial again.
func (t *caTrust) handshake(ctx context.Context, deadline time.Time, raw net.Conn, snap *caSnapshot, tmpl *tls.Config, host string, first bool) (_ *tls.Conn, retry bool, _ error) {
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		hctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	cfg := tmpl.Clone()
	cfg.RootCAs = snap.pool
	if cfg.ServerName == "" {
		cfg.ServerName = host // what net/http sets (connectMethod.tlsHost)
	}
	if ctx.Value(onlyHTTP1Key{}) != nil {
		cfg.NextProtos = nil // what net/http's addTLS does for a WebSocket upgrade
	}
	conn := tls.Client(raw, cfg)
	err := conn.HandshakeContext(hctx)
	if err == nil {
		return conn, false, nil
	}
	_ = raw.Close()
	if hctx.Err() != nil && ctx.Err() == nil {
		return nil, false, tlsHandshakeTimeoutError{}
	}
	retry = first && bundleMayCure(err) && t.refresh(hctx, snap) != snap && hctx.Err() == nil
	return nil, retry, err
}

// verifyConnection checks a proxied connection's server against the current
// bundle, for the name crypto/tls would verify: the tls-server-name, else
// the host net/http dialled when it is a DNS name (the SNI it sent). An IP
// address is sent without SNI, and nothing in a handshake callback says
// which one was dialled: its chain is checked here and its address, before
// a byte of any request is written on the connection, by the dial guard
// (see dialGuard), which knows the request's host.
func (t *caTrust) verifyConnection(serverName string, timeFn func() time.Time) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		name := serverName
		if name == "" {
			name = cs.ServerName
		}
		now := time.Now()
		if timeFn != nil {
			now = timeFn()
		}
		snap := t.current.Load()
		err := snap.verify(cs, name, now)
		if err == nil {
			return nil
		}
		if !bundleMayCure(err) {
			return err
		}
		if fresh := t.refresh(context.Background(), snap); fresh != snap {
			return fresh.verify(cs, name, now)
		}
		return err
	}
}

// bundleMayCure reports whether another bundle could make err's certificate
// verify: a verification error other than a name the certificate does not
// hold (x509 checks the name first, whatever the roots).
func bundleMayCure(err error) bool {
	var verr *tls.CertificateVerificationError
	var herr x509.HostnameError
	return errors.As(err, &verr) && !errors.As(err, &herr)
}

// repooled makes clone (a Clone of base) pool only its own connections and
// dial them through tracker, keeping everything else client-go set up.
// Clone copies the HTTP/2 upgrade bound to base's connection pool, where
// connections verified by a frozen CA or made with a frozen client
// certificate live; HTTP/2 is configured anew so that the clone pools only
// its own connections.
func repooled(clone, base *http.Transport, tracker *connrotation.ConnectionTracker) *http.Transport {
	h2 := base.TLSNextProto["h2"] != nil
	clone.TLSNextProto = nil
	if h2 {
		clone = utilnet.SetTransportDefaults(clone)
	} else if base.TLSNextProto != nil {
		clone.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	dial := base.DialContext
	if dial == nil {
		// client-go's default (transport.tlsTransportCache.get).
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	clone.DialContext = connrotation.NewDialerWithTracker(dial, tracker).DialContext
	return clone
}
