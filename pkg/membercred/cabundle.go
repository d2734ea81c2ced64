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
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
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

// caTrust is the CA bundle one member's connections are verified against,
// and the connections verified by it. Its owner (a SecretTokenSource, a
// FileCABundle) publishes bundles with set and answers refresh: called
// after a verification failure with the bundle that failed, it re-reads the
// bundle's origin (single flight, rate-limited, at most MaxReadWait) and
// returns the bundle current afterwards.
type caTrust struct {
	current atomic.Pointer[caSnapshot]
	tracker *connrotation.ConnectionTracker
	refresh func(failed *caSnapshot) *caSnapshot

	// mu guards last: clients of one member built from equal configs get one
	// cached base transport from client-go, and get one clone of it here,
	// so they share a connection pool as they do upstream.
	mu   sync.Mutex
	last struct {
		base *http.Transport
		host string
		rt   *http.Transport
	}
}

func newCATrust(refresh func(*caSnapshot) *caSnapshot) *caTrust {
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

// wrap returns rt's *http.Transport with its server verification taken
// from the current bundle, for a client of host (rest.Config.Host). Any
// other round tripper (client-go's SPDY and WebSocket upgraders build their
// own TLS from the config) is returned as it is and verifies against the
// config's CAData, as upstream does.
//
// The copy keeps everything client-go set up (proxy, timeouts, HTTP/2, the
// tls-server-name, minimum version, ciphers) and changes where the roots
// come from:
//   - a direct connection is dialled by DialTLSContext, which hands
//     crypto/tls the current bundle as RootCAs per connection: crypto/tls
//     verifies exactly as for a static CAData, and on failure the bundle is
//     re-read and the connection dialled once more if it changed;
//   - through a proxy, net/http does the TLS itself with TLSClientConfig,
//     fixed for the transport's life; there verification is
//     InsecureSkipVerify plus VerifyConnection running the same x509 check
//     against the current bundle, never skipped and never on system roots.
//
// Every connection is dialled through one connrotation tracker per member,
// which set uses to close them.
func (t *caTrust) wrap(rt http.RoundTripper, host string) http.RoundTripper {
	base, ok := rt.(*http.Transport)
	if !ok || base.TLSClientConfig == nil || base.TLSClientConfig.InsecureSkipVerify {
		return rt
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last.base == base && t.last.host == host {
		return t.last.rt
	}
	clone := base.Clone()
	// Clone copies the HTTP/2 upgrade bound to base's connection pool, where
	// connections verified by the frozen bundle live; configure HTTP/2 anew
	// so that the clone pools only its own connections.
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
	dialer := connrotation.NewDialerWithTracker(dial, t.tracker)
	clone.DialContext = dialer.DialContext

	direct := clone.TLSClientConfig.Clone()
	clone.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return t.dialTLS(ctx, dialer.DialContext, direct, clone.TLSHandshakeTimeout, network, addr)
	}
	proxied := clone.TLSClientConfig
	proxied.RootCAs = nil
	proxied.InsecureSkipVerify = true
	proxied.VerifyConnection = t.verifyConnection(proxied.ServerName, ipHost(host), proxied.Time)

	t.last.base, t.last.host, t.last.rt = base, host, clone
	return clone
}

// dialTLS dials addr and does the handshake with the current bundle as
// RootCAs. A certificate that the bundle does not verify makes the origin
// re-read it; if that yields another bundle, a new connection (dialled after
// the bundle change closed the old ones) is tried with it, once.
func (t *caTrust) dialTLS(ctx context.Context, dial connrotation.DialFunc, tmpl *tls.Config, timeout time.Duration, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// Loaded after the dial tracked the connection: set publishes before
		// it closes the tracked ones, so a connection is either closed by a
		// change or verified by the bundle that change published.
		snap := t.current.Load()
		cfg := tmpl.Clone()
		cfg.RootCAs = snap.pool
		if cfg.ServerName == "" {
			cfg.ServerName = host // what net/http sets (connectMethod.tlsHost)
		}
		conn := tls.Client(raw, cfg)
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			hctx, cancel = context.WithTimeout(ctx, timeout)
		}
		err = conn.HandshakeContext(hctx)
		cancel()
		if err == nil {
			return conn, nil
		}
		_ = raw.Close()
		var verr *tls.CertificateVerificationError
		if attempt > 0 || !errors.As(err, &verr) || t.refresh(snap) == snap {
			return nil, err
		}
	}
}

// verifyConnection checks a proxied connection's server against the current
// bundle, for the name crypto/tls would verify: the tls-server-name, else
// the host net/http dialled (the SNI it sent), else, for an IP address
// (which is sent without SNI), the client's host if it is one. With none of
// them the connection is refused rather than checked against no name.
func (t *caTrust) verifyConnection(serverName, hostIP string, timeFn func() time.Time) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		name := serverName
		if name == "" {
			name = cs.ServerName
		}
		if name == "" {
			name = hostIP
		}
		if name == "" {
			return errors.New("tls: cannot tell which server name to verify (no tls-server-name, no SNI, and the client's host is not an IP address)")
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
		if fresh := t.refresh(snap); fresh != snap {
			return fresh.verify(cs, name, now)
		}
		return err
	}
}

// ipHost returns the host of a rest.Config.Host when it is an IP address.
func ipHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		u, err = url.Parse("https://" + host)
		if err != nil {
			return ""
		}
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil {
		return u.Hostname()
	}
	return ""
}
