package membercred

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// viaProxy sends cfg's requests through an HTTP CONNECT proxy, as
// BuildClusterConfig does for a Cluster with spec.proxyURL: net/http then
// does the TLS handshake itself, the path TLSClientConfig.VerifyConnection
// covers.
func viaProxy(t *testing.T, cfg *rest.Config) {
	t.Helper()
	u, err := url.Parse(tunnelProxy(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Proxy = http.ProxyURL(u)
}

// paths are the two ways a member connection is verified.
var paths = []struct {
	name  string
	setup func(*testing.T, *rest.Config)
}{
	{"direct", func(*testing.T, *rest.Config) {}},
	{"proxied", viaProxy},
}

// memberClient is memberConfig with the path applied and a client built.
func memberClient(t *testing.T, src *SecretTokenSource, st *caSecretStore, host string, path func(*testing.T, *rest.Config)) *http.Client {
	t.Helper()
	cfg := memberConfig(t, src, st, host)
	path(t, cfg)
	return httpClient(t, cfg)
}

func isVerificationError(err error) bool {
	var verr *tls.CertificateVerificationError
	return errors.As(err, &verr)
}

// TestCABundleRejectsWhatClientGoRejects: verification against the Secret's
// bundle is not weaker than client-go's against a static CAData, on either
// path: a certificate for another name, an expired one and one from an
// unrelated CA are refused (and so is each by a plain client-go client, the
// reference), while the right one is accepted.
func TestCABundleRejectsWhatClientGoRejects(t *testing.T) {
	trusted := newTestCA(t, "trusted", nil)
	unrelated := newTestCA(t, "unrelated", nil)
	cases := []struct {
		name   string
		cert   tls.Certificate
		accept bool
	}{
		{"right name and CA", trusted.serving(t, leafOpts{}), true},
		{"wrong name", trusted.serving(t, leafOpts{dnsNames: []string{"other.example"}, ips: []net.IP{net.IPv4(10, 0, 0, 1)}}), false},
		{"expired", trusted.serving(t, leafOpts{expired: true}), false},
		{"unrelated CA", unrelated.serving(t, leafOpts{}), false},
	}
	for _, p := range paths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				m := newTLSMember(t, c.cert, false)
				st := newCASecretStore("tok", trusted.pem())
				src := newCASource(t, st)

				reference := &rest.Config{Host: m.URL, TLSClientConfig: rest.TLSClientConfig{CAData: trusted.pem()}}
				p.setup(t, reference)
				refErr := fetchOK(httpClient(t, reference), m.URL)

				err := fetchOK(memberClient(t, src, st, m.URL, p.setup), m.URL)
				if c.accept {
					if err != nil || refErr != nil {
						t.Fatalf("membercred: %v; client-go: %v; want both accepted", err, refErr)
					}
					return
				}
				if !isVerificationError(err) {
					t.Fatalf("membercred: got %v, want a certificate verification error", err)
				}
				if !isVerificationError(refErr) {
					t.Fatalf("client-go reference: got %v, want a certificate verification error", refErr)
				}
				// A name the certificate does not hold is not cured by any
				// bundle (x509 checks it before the roots): it reads nothing.
				want := int64(1)
				if c.name == "wrong name" {
					want = 0
				}
				if got := st.calls.Load(); got != want {
					t.Errorf("the verification failure made %d reads of the Secret, want %d", got, want)
				}
			})
		}
	}
}

// TestCABundleIntermediateChain: a server that sends its intermediate is
// verified against a bundle holding only the root, as crypto/tls does.
func TestCABundleIntermediateChain(t *testing.T) {
	root := newTestCA(t, "root", nil)
	inter := newTestCA(t, "intermediate", root)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			m := newTLSMember(t, inter.serving(t, leafOpts{}, inter), false)
			st := newCASecretStore("tok", root.pem())
			src := newCASource(t, st)
			if err := fetchOK(memberClient(t, src, st, m.URL, p.setup), m.URL); err != nil {
				t.Fatalf("leaf + intermediate against the root: %v", err)
			}
		})
	}
}

// TestCABundleTLSServerName: the tls-server-name is the name verified, on
// both paths, as client-go does.
func TestCABundleTLSServerName(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	m := newTLSMember(t, ca.serving(t, leafOpts{dnsNames: []string{"member.internal"}}), false)
	for _, p := range paths {
		for _, sn := range []struct {
			name   string
			accept bool
		}{{"member.internal", true}, {"other.internal", false}} {
			t.Run(p.name+"/"+sn.name, func(t *testing.T) {
				st := newCASecretStore("tok", ca.pem())
				src := newCASource(t, st)
				cfg := memberConfig(t, src, st, m.URL)
				cfg.TLSClientConfig.ServerName = sn.name
				p.setup(t, cfg)
				err := fetchOK(httpClient(t, cfg), m.URL)
				if sn.accept != (err == nil) {
					t.Fatalf("tls-server-name %s: got %v, accept=%v", sn.name, err, sn.accept)
				}
			})
		}
	}
}

// caseClock makes a source whose reads are dated by a fake clock, so tests
// can step past the forced-read floor and the refresh period.
func caseClock(clk *testingclock.FakeClock) func(*SecretTokenSourceOptions) {
	return func(o *SecretTokenSourceOptions) { o.Clock = clk }
}

// refreshNow makes the source read the Secret once (the period is up and
// a request notices) and waits for the read.
func refreshNow(t *testing.T, clk *testingclock.FakeClock, src *SecretTokenSource, st *caSecretStore, c *http.Client, url string) {
	t.Helper()
	before := st.calls.Load()
	clk.Step(DefaultRefreshPeriod)
	_ = fetchOK(c, url) // served with the cached token, starts the read
	waitFor(t, "the periodic read", func() bool {
		if st.calls.Load() == before {
			return false
		}
		src.mu.Lock()
		defer src.mu.Unlock()
		return src.inFlight == nil
	})
}

// TestCABundleOverlapThenSwitch is case A: the new CA is published beside
// the old one before the server switches. No connection is closed when the
// bundle grows, and after the switch no request fails and no extra read is
// made.
func TestCABundleOverlapThenSwitch(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
			st := newCASecretStore("tok", oldCA.pem())
			src := newCASource(t, st, caseClock(clk))
			c := memberClient(t, src, st, m.URL, p.setup)
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatal(err)
			}

			st.setCA(bundle(oldCA, newCA))
			refreshNow(t, clk, src, st, c, m.URL)
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatal(err)
			}
			if got := m.accepted.Load(); got != 1 {
				t.Fatalf("adding a CA to the bundle: %d connections accepted, want the first one kept", got)
			}

			reads := st.calls.Load()
			m.restartWith(newCA.serving(t, leafOpts{}))
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatalf("after the switch to the new CA: %v", err)
			}
			if got := st.calls.Load(); got != reads {
				t.Errorf("the switch cost %d reads of the Secret, want none", got-reads)
			}
		})
	}
}

// TestCABundleReplacedAfterSwitch is case B: the server switches first,
// requests fail as upstream's do; once the Secret holds the new CA the next
// request recovers through the read its verification failure starts, with
// no restart and without waiting for the period.
func TestCABundleReplacedAfterSwitch(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
			st := newCASecretStore("tok", oldCA.pem())
			var logs logLines
			src := newCASource(t, st, caseClock(clk), func(o *SecretTokenSourceOptions) { o.Logger = logs.logger() })
			c := memberClient(t, src, st, m.URL, p.setup)
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatal(err)
			}

			m.restartWith(newCA.serving(t, leafOpts{}))
			if err := fetchOK(c, m.URL); !isVerificationError(err) {
				t.Fatalf("before the Secret is updated: got %v, want a certificate verification error", err)
			}
			if err := fetchOK(c, m.URL); !isVerificationError(err) {
				t.Fatalf("again within the forced-read floor: got %v, want a certificate verification error", err)
			}
			if got := st.calls.Load(); got != 1 {
				t.Fatalf("two failures within the floor made %d reads, want 1", got)
			}

			st.setCA(newCA.pem())
			clk.Step(MinForcedRefreshInterval)
			err := fetchOK(c, m.URL)
			if p.name == "proxied" {
				// net/http does this handshake itself on a connection dialled
				// before the bundle change, which closes it (it cannot be told
				// from one the withdrawn CA verified): this one request fails,
				// the next is verified against the new bundle.
				if err == nil {
					t.Fatal("the proxied request whose failure read the new bundle succeeded on a connection the change closed")
				}
				err = fetchOK(c, m.URL)
			}
			if err != nil {
				t.Fatalf("after the Secret holds the new CA: %v", err)
			}
			if got := st.calls.Load(); got != 2 {
				t.Errorf("recovering made %d reads in all, want 2", got)
			}
			if got := len(logs.containing("Picked up a changed member cluster CA bundle")); got != 1 {
				t.Errorf("%d log lines for the change, want 1: %q", got, logs.all())
			}
		})
	}
}

// TestCABundleWithdrawnCAClosesConnections: when the bundle drops a CA, no
// request keeps riding a connection verified by it: the member's
// connections are closed, and the next handshake with the withdrawn CA's
// certificate fails.
func TestCABundleWithdrawnCAClosesConnections(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		for _, h2 := range []bool{false, true} {
			name := p.name + "/http1"
			if h2 {
				name = p.name + "/http2"
			}
			t.Run(name, func(t *testing.T) {
				clk := testingclock.NewFakeClock(time.Now())
				m := newTLSMember(t, oldCA.serving(t, leafOpts{}), h2)
				st := newCASecretStore("tok", bundle(oldCA, newCA))
				src := newCASource(t, st, caseClock(clk))
				c := memberClient(t, src, st, m.URL, p.setup)
				resp, err := c.Get(m.URL)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if h2 && p.name == "direct" && resp.ProtoMajor != 2 {
					t.Fatalf("the clone spoke HTTP/%d to an HTTP/2 server, want 2", resp.ProtoMajor)
				}

				st.setCA(newCA.pem())
				refreshNow(t, clk, src, st, c, m.URL)
				waitFor(t, "the member's connections to be closed", func() bool { return m.closed.Load() == m.accepted.Load() })
				clk.Step(MinForcedRefreshInterval)
				if err := fetchOK(c, m.URL); !isVerificationError(err) {
					t.Fatalf("with the old CA withdrawn: got %v, want a certificate verification error", err)
				}
			})
		}
	}
}

// TestCABundleBadValueKeepsLastGood: a value that holds no certificate
// leaves the last good bundle in use, is reported once on the health
// metric's reason and in one log line, and never logs the value.
func TestCABundleBadValueKeepsLastGood(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	huge := bytes.Repeat(ca.pem(), 10<<20/len(ca.pem())+1)
	cases := []struct {
		name   string
		value  []byte
		reason string
	}{
		{"garbage", []byte("not a bundle at all"), ReasonCABundleInvalid},
		{"empty", nil, ReasonCABundleInvalid},
		{"10 MiB", huge, ReasonCABundleInvalid},
		{"private key", keyPEM, ReasonCABundleInvalid},
		{"unparsable certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}), ReasonCABundleInvalid},
		{"key removed", nil, ReasonCABundleMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			m := newTLSMember(t, ca.serving(t, leafOpts{}), false)
			st := newCASecretStore("tok", ca.pem())
			var logs logLines
			metrics := MustNewMetrics(prometheus.NewRegistry())
			src := newCASource(t, st, caseClock(clk), func(o *SecretTokenSourceOptions) {
				o.Logger = logs.logger()
				o.Metrics = metrics
			})
			client := memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {})

			if c.reason == ReasonCABundleMissing {
				st.removeCA()
			} else {
				st.setCA(c.value)
			}
			refreshNow(t, clk, src, st, client, m.URL)
			refreshNow(t, clk, src, st, client, m.URL)
			m.CloseClientConnections()
			if err := fetchOK(client, m.URL); err != nil {
				t.Fatalf("with the last good bundle: %v", err)
			}
			h := src.Health()
			if h.CABundleErrorReason != c.reason || h.ConsecutiveCABundleFailures != 2 || !h.TracksCABundle {
				t.Fatalf("Health: reason %q, failures %d, tracking %v; want %q, 2, true", h.CABundleErrorReason, h.ConsecutiveCABundleFailures, h.TracksCABundle, c.reason)
			}
			if h.Err() == nil || h.LastError != "" {
				t.Fatalf("Health.Err() = %v, LastError %q: want the bundle reported and the token fine", h.Err(), h.LastError)
			}
			if got := testutil.ToFloat64(metrics.refreshFailures.WithLabelValues("member1", c.reason)); got != 2 {
				t.Errorf("refresh_failures_total{reason=%q} = %v, want 2", c.reason, got)
			}
			errLines := logs.containing(c.reason)
			if len(errLines) != 1 {
				t.Fatalf("%d log lines with %s, want 1 for two bad reads: %q", len(errLines), c.reason, logs.all())
			}
			for _, line := range logs.all() {
				if strings.Contains(line, "BEGIN") || strings.Contains(line, "junk") || strings.Contains(line, "not a bundle") {
					t.Fatalf("a log line quotes the value: %q", line)
				}
			}

			st.setCA(ca.pem())
			refreshNow(t, clk, src, st, client, m.URL)
			if h := src.Health(); h.CABundleErrorReason != "" || h.Err() != nil {
				t.Fatalf("after a good bundle again: %+v", h)
			}
			if got := len(logs.containing("CA bundle is usable in its Secret again")); got != 1 {
				t.Errorf("%d recovery lines, want 1", got)
			}
		})
	}
}

// TestCABundleConcurrentRequestsDuringChange: many requests while the
// server switches CA and the Secret follows. Each recovers, the Secret is
// read at most once per forced-read floor plus the final read, and -race
// sees the bundle swapped under handshakes.
func TestCABundleConcurrentRequestsDuringChange(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	m := newTLSMember(t, oldCA.serving(t, leafOpts{}), true)
	st := newCASecretStore("tok", oldCA.pem())
	src := newCASource(t, st)
	clients := []*http.Client{
		memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {}),
		memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {}),
		memberClient(t, src, st, m.URL, viaProxy),
	}
	start := time.Now()
	m.restartWith(newCA.serving(t, leafOpts{}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var unexpected []error
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i%len(clients)]
			for time.Since(start) < 30*time.Second {
				err := fetchOK(c, m.URL)
				if err == nil {
					return
				}
				if !isVerificationError(err) && !connectionCut(err) {
					mu.Lock()
					unexpected = append(unexpected, err)
					mu.Unlock()
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			unexpected = append(unexpected, errors.New("no request succeeded within 30s"))
			mu.Unlock()
		}()
	}
	time.Sleep(50 * time.Millisecond)
	st.setCA(newCA.pem())
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("unexpected errors: %v", unexpected)
	}
	elapsed := time.Since(start)
	if max := int64(elapsed/MinForcedRefreshInterval) + 2; st.calls.Load() > max {
		t.Errorf("%d reads of the Secret in %s, want at most %d (one per floor)", st.calls.Load(), elapsed, max)
	}
}

// connectionCut is an error of a request whose connection the change
// closed under it: the member's restart, or the old transport's
// connections closed when the bundle changed. net/http's HTTP/2 client
// says "client conn could not be established" when a connection dialled
// for a request is closed before its first stream (seen under load in a
// cold make test); client-go's certificate rotation closes connections the
// same way, and its callers retry.
func connectionCut(err error) bool {
	for _, s := range []string{"closed", "EOF", "reset", "client conn could not be established"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestTrustSecretCABundleLeavesOtherConfigsAlone: insecure, CAFile, no
// CAData and a CAData client-go refuses are upstream's behaviour, unwrapped.
func TestTrustSecretCABundleLeavesOtherConfigsAlone(t *testing.T) {
	st := newCASecretStore("tok", nil)
	src := newCASource(t, st)
	for name, tc := range map[string]rest.TLSClientConfig{
		"insecure":  {Insecure: true},
		"CAFile":    {CAFile: "/var/run/ca.crt"},
		"no CAData": {},
		"garbage":   {CAData: []byte("garbage")},
	} {
		cfg := &rest.Config{Host: "https://member:6443", TLSClientConfig: tc}
		src.TrustSecretCABundle(cfg)
		if cfg.WrapTransport != nil {
			t.Errorf("%s: the config was wrapped", name)
		}
	}
	if src.Health().TracksCABundle {
		t.Error("the source tracks a bundle no config gave it")
	}
}

// TestCABundleSPDYLeftAlone: an upgrade round tripper (exec, attach,
// port-forward) is not an *http.Transport and passes through the wrapper.
func TestCABundleSPDYLeftAlone(t *testing.T) {
	trust := newCATrust(func(_ context.Context, s *caSnapshot) *caSnapshot { return s })
	if got := trust.wrap(&notATransport{}, "https://member:6443"); got != nil {
		t.Fatal("a round tripper other than *http.Transport was replaced")
	}
	insecure := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	if got := trust.wrap(insecure, "https://member:6443"); got != nil {
		t.Fatal("an insecure transport was replaced")
	}
}

// TestParseCABundleAgreesWithClientGo: a bundle is taken exactly when
// client-go's root pool (x509.CertPool.AppendCertsFromPEM) takes it.
func TestParseCABundleAgreesWithClientGo(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	withHeader := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"a": "b"}, Bytes: ca.cert.Raw})
	for name, raw := range map[string][]byte{
		"one":            ca.pem(),
		"two":            bundle(ca, newTestCA(t, "other", nil)),
		"text around":    append(append([]byte("# comment\n"), ca.pem()...), "trailing"...),
		"header":         withHeader,
		"garbage":        []byte("garbage"),
		"junk then good": append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}), ca.pem()...),
	} {
		snap, detail := parseCABundle(raw)
		ok := x509.NewCertPool().AppendCertsFromPEM(raw)
		if ok != (detail == "") || (snap != nil) != ok {
			t.Errorf("%s: parseCABundle detail %q, client-go AppendCertsFromPEM %v", name, detail, ok)
		}
	}
}

// TestCABundleOverlapPublishedNotYetRead is case A as it happens between
// two periodic reads: the Secret holds old+new when the server switches,
// but the source still has the old bundle. The failing handshake reads the
// Secret and is verified against what it holds: the caller sees nothing.
func TestCABundleOverlapPublishedNotYetRead(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			m := newTLSMember(t, oldCA.serving(t, leafOpts{}), false)
			st := newCASecretStore("tok", oldCA.pem())
			src := newCASource(t, st)
			c := memberClient(t, src, st, m.URL, p.setup)
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatal(err)
			}
			st.setCA(bundle(oldCA, newCA))
			m.restartWith(newCA.serving(t, leafOpts{}))
			if err := fetchOK(c, m.URL); err != nil {
				t.Fatalf("after the switch, with old+new in the Secret: %v", err)
			}
			if got := st.calls.Load(); got != 1 {
				t.Errorf("%d reads, want the one the failed verification started", got)
			}
		})
	}
}

type notATransport struct{}

func (*notATransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unused")
}

// TestCABundleFailureWaitsAtMostMaxReadWait: a handshake whose verification
// failed waits for the Secret read it started at most MaxReadWait; a getter
// that hangs costs it no more, and the request fails as upstream's would.
func TestCABundleFailureWaitsAtMostMaxReadWait(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old", nil), newTestCA(t, "new", nil)
	clk := testingclock.NewFakeClock(time.Now())
	m := newTLSMember(t, newCA.serving(t, leafOpts{}), false)
	st := newCASecretStore("tok", oldCA.pem())
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	hanging := func(ns, name string) (*corev1.Secret, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		return st.get(ns, name)
	}
	src := newCASource(t, st, caseClock(clk), func(o *SecretTokenSourceOptions) { o.Getter = hanging })
	c := memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {})
	defer close(release)

	done := make(chan error, 1)
	go func() { done <- fetchOK(c, m.URL) }()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("the failed handshake read nothing: %v", err)
	}
	waitFor(t, "the handshake to wait for the read", clk.HasWaiters)
	clk.Step(MaxReadWait)
	if err := <-done; !isVerificationError(err) {
		t.Fatalf("after MaxReadWait with the read still hanging: got %v, want the verification error", err)
	}
}

// TestCABundleUnchangedCostsNoRead: with the Secret unchanged, following
// its bundle costs no Secret read beyond the token's: clients built again
// and again (as Karmada's status controller does), their requests and new
// connections read nothing, and they share one connection pool.
func TestCABundleUnchangedCostsNoRead(t *testing.T) {
	ca := newTestCA(t, "ca", nil)
	m := newTLSMember(t, ca.serving(t, leafOpts{}), false)
	st := newCASecretStore("tok", ca.pem())
	src := newCASource(t, st)
	for i := range 5 {
		c := memberClient(t, src, st, m.URL, func(*testing.T, *rest.Config) {})
		if err := fetchOK(c, m.URL); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	if got := st.calls.Load(); got != 0 {
		t.Errorf("%d Secret reads, want none", got)
	}
	if got := m.accepted.Load(); got != 1 {
		t.Errorf("%d connections for five clients built from equal configs, want one shared pool as client-go's transport cache gives", got)
	}
}
