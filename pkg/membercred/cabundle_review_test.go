package membercred

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// TestCABundleNewClientTrustsNoLessThanItsConfig: a client built from a
// config must never trust a CA that config no longer holds. Here a periodic
// read fetched the Secret, the operator withdrew the old CA (after a
// compromise), a new client was built from the Secret as it is now, and the
// read fetched before the withdrawal completed afterwards. The new client
// refuses the withdrawn CA's certificate at once, as upstream's client
// built from the new caBundle does.
func TestCABundleNewClientTrustsNoLessThanItsConfig(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
			st := newCASecretStore("tok", bundle(oldCA, newCA))
			var armed atomic.Bool
			entered, held := make(chan struct{}), make(chan struct{})
			getter := func(ns, name string) (*corev1.Secret, error) {
				secret, err := st.get(ns, name) // the Secret as it is when the read starts
				if armed.CompareAndSwap(true, false) {
					close(entered)
					<-held
				}
				return secret, err
			}
			src := newCASource(t, st, caseClock(clk), func(o *SecretTokenSourceOptions) { o.Getter = getter })
			first := memberClient(t, src, st, m.URL, p.setup)
			if err := fetchOK(first, m.URL); err != nil {
				t.Fatal(err)
			}

			armed.Store(true)
			clk.Step(DefaultRefreshPeriod)
			_ = fetchOK(first, m.URL) // starts the periodic read, held after its fetch
			<-entered
			st.setCA(newCA.pem())
			newClient := memberClient(t, src, st, m.URL, p.setup)
			close(held)
			waitFor(t, "the Secret reads to settle", func() bool {
				src.mu.Lock()
				defer src.mu.Unlock()
				return src.inFlight == nil
			})

			reference := &rest.Config{Host: m.URL, TLSClientConfig: rest.TLSClientConfig{CAData: newCA.pem()}}
			p.setup(t, reference)
			if err := fetchOK(httpClient(t, reference), m.URL); !isVerificationError(err) {
				t.Fatalf("client-go reference built from the new caBundle: got %v, want a certificate verification error", err)
			}
			if err := fetchOK(newClient, m.URL); !isVerificationError(err) {
				t.Fatalf("a client built from a caBundle without the old CA: got %v, want a certificate verification error", err)
			}
		})
	}
}

// redirectingMember answers every request with a redirect to target.
func redirectingMember(target *string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, *target, http.StatusFound)
	})
}

// recordingMember answers 200 and records whether a request carried a
// bearer token.
func recordingMember(sawToken *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawToken.Store(true)
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// TestCABundleRedirectVerifiesTheHostDialled: client-go follows redirects,
// and crypto/tls verifies each connection against the host it dials. So
// must the bundle's verification, on both paths: a redirect to IP B whose
// certificate (from the member's CA) is valid only for the configured IP A
// is refused before the token is sent, and a DNS host redirected to an IP
// is verified against that IP.
func TestCABundleRedirectVerifiesTheHostDialled(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	ipA, ipB := net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)
	cases := []struct {
		name   string
		host   func(a *tlsMember) string
		certA  leafOpts
		certB  leafOpts
		accept bool
	}{
		{
			name:  "IP redirected to another IP whose certificate names the first",
			host:  func(a *tlsMember) string { return a.URL },
			certA: leafOpts{ips: []net.IP{ipA}}, certB: leafOpts{ips: []net.IP{ipA}},
		},
		{
			name:  "DNS host redirected to an IP",
			host:  func(a *tlsMember) string { return strings.Replace(a.URL, "127.0.0.1", "localhost", 1) },
			certA: leafOpts{dnsNames: []string{"localhost"}}, certB: leafOpts{ips: []net.IP{ipB}},
			accept: true,
		},
	}
	for _, p := range paths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				var sawToken atomic.Bool
				b := newTLSMemberOn(t, "127.0.0.2:0", recordingMember(&sawToken), ca.serving(t, c.certB), false)
				a := newTLSMemberOn(t, "", redirectingMember(&b.URL), ca.serving(t, c.certA), false)
				host := c.host(a)

				reference := &rest.Config{Host: host, BearerToken: "tok", TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem()}}
				p.setup(t, reference)
				refErr := fetchOK(httpClient(t, reference), host)
				if c.accept != (refErr == nil) || (refErr != nil && !isVerificationError(refErr)) {
					t.Fatalf("client-go reference: got %v, accept=%v", refErr, c.accept)
				}
				sawToken.Store(false)

				st := newCASecretStore("tok", ca.pem())
				src := newCASource(t, st)
				err := fetchOK(memberClient(t, src, st, host, p.setup), host)
				if c.accept {
					if err != nil {
						t.Fatalf("client-go accepts it; membercred: %v", err)
					}
					return
				}
				if !isVerificationError(err) {
					t.Fatalf("client-go refuses it; membercred: got %v, want a certificate verification error", err)
				}
				if sawToken.Load() {
					t.Fatal("the bearer token reached the server whose certificate is not valid for its address")
				}
			})
		}
	}
}

// upgradingMember switches a WebSocket upgrade to 101 (over HTTP/1.1 only,
// as a kube-apiserver does) and answers anything else 200.
func upgradingMember() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			_, _ = io.WriteString(w, "ok")
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
	})
}

func upgrade(c *http.Client, url string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestCABundleWebSocketUpgradeSpeaksHTTP1: a WebSocket upgrade sent through
// a member config's round tripper to an HTTP/2-capable server gets its 101,
// as upstream's does: net/http asks for HTTP/1.1 for it, and the dial must
// not offer h2.
func TestCABundleWebSocketUpgradeSpeaksHTTP1(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			m := newTLSMemberOn(t, "", upgradingMember(), ca.serving(t, leafOpts{}), true)
			reference := &rest.Config{Host: m.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem()}}
			p.setup(t, reference)
			if code, err := upgrade(httpClient(t, reference), m.URL); err != nil || code != http.StatusSwitchingProtocols {
				t.Fatalf("client-go reference: %d, %v; want 101", code, err)
			}
			st := newCASecretStore("tok", ca.pem())
			src := newCASource(t, st)
			c := memberClient(t, src, st, m.URL, p.setup)
			if err := fetchOK(c, m.URL); err != nil { // an HTTP/2 connection in the pool first
				t.Fatal(err)
			}
			if code, err := upgrade(c, m.URL); err != nil || code != http.StatusSwitchingProtocols {
				t.Fatalf("membercred: %d, %v; want 101", code, err)
			}
		})
	}
}

// stalledListener accepts connections and never answers: a TLS handshake
// with it times out.
func stalledListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(c)) }()
		}
	}()
	return "https://" + l.Addr().String()
}

// TestCABundleHandshakeTimeoutReadsAsUpstream: a handshake that times out
// fails with net/http's own "net/http: TLS handshake timeout", a timeout
// net.Error, as upstream's does, not as the request's deadline.
func TestCABundleHandshakeTimeoutReadsAsUpstream(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	host := stalledListener(t)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			base := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, TLSHandshakeTimeout: 50 * time.Millisecond}
			cfg := &rest.Config{Host: host}
			p.setup(t, cfg)
			base.Proxy = cfg.Proxy

			refErr := fetchOK(&http.Client{Transport: base.Clone()}, host)
			if refErr == nil || !strings.Contains(refErr.Error(), "net/http: TLS handshake timeout") {
				t.Fatalf("net/http reference: got %v, want its TLS handshake timeout", refErr)
			}

			st := newCASecretStore("tok", ca.pem())
			src := newCASource(t, st)
			mcfg := memberConfig(t, src, st, host)
			err := fetchOK(&http.Client{Transport: mcfg.WrapTransport(base)}, host)
			var nerr net.Error
			if err == nil || !strings.Contains(err.Error(), "net/http: TLS handshake timeout") || !errors.As(err, &nerr) || !nerr.Timeout() {
				t.Fatalf("membercred: got %v, want %v", err, refErr)
			}
		})
	}
}

// TestCABundleInsecureClusterStopsReportingMissing: once a cluster is
// switched to insecureSkipTLSVerification (its caBundle removed), a Secret
// without the key is no longer a failure to report, while the clients built
// before keep their last good bundle.
func TestCABundleInsecureClusterStopsReportingMissing(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	clk := testingclock.NewFakeClock(time.Now())
	m := newTLSMember(t, ca.serving(t, leafOpts{}), false)
	st := newCASecretStore("tok", ca.pem())
	src := newCASource(t, st, caseClock(clk))
	c := memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {})
	st.removeCA()
	refreshNow(t, clk, src, st, c, m.URL)
	if h := src.Health(); h.CABundleErrorReason != ReasonCABundleMissing {
		t.Fatalf("with a verifying cluster: reason %q, want %s", h.CABundleErrorReason, ReasonCABundleMissing)
	}
	src.TrustSecretCABundle(&rest.Config{Host: m.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	refreshNow(t, clk, src, st, c, m.URL)
	if h := src.Health(); h.CABundleErrorReason != "" || h.Err() != nil {
		t.Fatalf("after the switch to insecure: %+v", h)
	}
	m.CloseClientConnections()
	if err := fetchOK(c, m.URL); err != nil {
		t.Fatalf("a client built before the switch, with its last good bundle: %v", err)
	}
}
