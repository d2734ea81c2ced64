package membercred

import (
	"bytes"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/spdy"
)

// proxyHeaderStandIn has the shape of Karmada's proxyHeaderRoundTripper
// (pkg/util/round_trippers.go, v1.18.2), which BuildClusterConfig installs for
// a cluster with spec.proxyURL and spec.proxyHeader: it must see the bare
// *http.Transport to set ProxyConnectHeader on a clone, and it has no
// WrappedRoundTripper, so nothing below it can be recognised.
type proxyHeaderStandIn struct {
	proxyHeaders http.Header
	roundTripper http.RoundTripper
}

func (r *proxyHeaderStandIn) RoundTrip(req *http.Request) (*http.Response, error) {
	if tr, ok := r.roundTripper.(*http.Transport); ok {
		tr = tr.Clone()
		tr.ProxyConnectHeader = r.proxyHeaders
		return tr.RoundTrip(req)
	}
	return r.roundTripper.RoundTrip(req)
}

// withProxyHeader is NewProxyHeaderRoundTripperWrapperConstructor's shape.
func withProxyHeader(wt func(http.RoundTripper) http.RoundTripper, h http.Header) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		if wt != nil {
			rt = wt(rt)
		}
		return &proxyHeaderStandIn{proxyHeaders: h, roundTripper: rt}
	}
}

// chainServer is a member API server that counts the TCP connections it
// accepts and the upgrade requests it sees. It accepts only the tokens it
// is told to and answers everything else 401 with a Status body, keeping
// the connection open as an API server does.
type chainServer struct {
	*httptest.Server
	conns    atomic.Int64
	upgrades atomic.Int64

	mu     sync.Mutex
	tokens []string // Authorization of each request, "Bearer " stripped
	accept string
}

func newChainServer(t *testing.T, accept string) *chainServer {
	t.Helper()
	s := &chainServer{accept: accept}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew { // recorded before the connection's first request is served
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *chainServer) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if r.Header.Get("Upgrade") != "" {
		s.upgrades.Add(1)
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	s.tokens = append(s.tokens, tok)
	s.mu.Unlock()
	if tok != s.accept {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, unauthorizedBody)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func (s *chainServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}

// connectProxy is an HTTP CONNECT proxy, what spec.proxyURL points at. It
// records the headers of each CONNECT, where ProxyConnectHeader lands.
type connectProxy struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newConnectProxy(t *testing.T) *connectProxy {
	t.Helper()
	p := &connectProxy{}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.Start()
	t.Cleanup(p.Close)
	return p
}

func (p *connectProxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.mu.Lock()
		p.headers = append(p.headers, r.Header.Clone())
		p.mu.Unlock()
	}
	tunnelConnect(w, r)
}

func (p *connectProxy) connectHeaders() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.headers...)
}

// clusterChain builds the rest.Config BuildClusterConfig (Karmada v1.18.2,
// pkg/util/membercluster_client.go, with patch 0001) builds for one shape of
// Cluster: TLS with the Secret's CA or insecure, optionally through
// spec.proxyURL, optionally with spec.proxyHeader; then the glue's
// clusterConfig.Wrap(source.WrapTransport), last.
type clusterChain struct {
	name        string
	insecure    bool
	proxy       bool
	proxyHeader bool
}

var clusterChains = []clusterChain{
	{name: "plain"},
	{name: "insecure", insecure: true},
	{name: "proxyURL", proxy: true},
	{name: "proxyURL+proxyHeader", proxy: true, proxyHeader: true},
	{name: "insecure+proxyURL+proxyHeader", insecure: true, proxy: true, proxyHeader: true},
}

const testProxyHeader = "X-Holdfast-Test"

func (c clusterChain) config(t *testing.T, srv *chainServer, src *SecretTokenSource) (*rest.Config, *connectProxy) {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL, Timeout: 32 * time.Second}
	if c.insecure {
		cfg.TLSClientConfig.Insecure = true
	} else {
		cfg.TLSClientConfig = rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	}
	var proxy *connectProxy
	if c.proxy {
		proxy = newConnectProxy(t)
		u, err := url.Parse(proxy.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Proxy = http.ProxyURL(u)
		if c.proxyHeader {
			cfg.Wrap(withProxyHeader(cfg.WrapTransport, http.Header{testProxyHeader: {"on"}}))
		}
	}
	cfg.Wrap(src.WrapTransport)
	return cfg, proxy
}

// TestUpgradeIsSentAtMostOnceThroughEveryClusterChain is issue 21 defect 3:
// an exec upgrade through client-go's real SpdyRoundTripper, answered 401
// while the Secret already holds a new token, must reach the member once
// over one connection, whatever chain BuildClusterConfig built. A replay
// would dial a second connection in the same single-use round tripper and
// orphan the first one, still open.
func TestUpgradeIsSentAtMostOnceThroughEveryClusterChain(t *testing.T) {
	for _, c := range clusterChains {
		t.Run(c.name, func(t *testing.T) {
			srv := newChainServer(t, "new") // "old" is revoked
			src, _, _ := newSource(t, storeWithToken("new"), "old", nil)
			cfg, _ := c.config(t, srv, src)

			rt, upgrader, err := spdy.RoundTripperFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods/p/exec?command=true&stdout=true", nil)
			if err != nil {
				t.Fatal(err)
			}
			upgradeOnce(t, srv, upgrader, rt, req)
		})
	}
}

// upgradeOnce sends req as an SPDY exec upgrade through rt (the chain above
// client-go's upgrader) and checks that the refused upgrade reached srv once,
// over one connection: the SPDY round tripper keeps only the last
// connection, so any other would be left open.
func upgradeOnce(t *testing.T, srv *chainServer, upgrader spdy.Upgrader, rt http.RoundTripper, req *http.Request) {
	t.Helper()
	if conn, _, err := spdy.Negotiate(upgrader, &http.Client{Transport: rt}, req, "v5.channel.k8s.io"); err == nil {
		conn.Close()
		t.Fatal("the upgrade succeeded, want it refused with the rotated-out token")
	}
	if n := srv.upgrades.Load(); n != 1 {
		t.Errorf("server saw the upgrade %d times (tokens %q), want exactly once", n, srv.seen())
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections for one upgrade, want 1: the SPDY round tripper keeps only the last, any other is left open", n)
	}
}

// TestListIsReplayedThroughEveryClusterChain is the feature the upgrade fix
// must keep: a LIST answered 401 after a rotation is sent once more with the
// Secret's new token, through every chain, and the caller sees the 200.
func TestListIsReplayedThroughEveryClusterChain(t *testing.T) {
	for _, c := range clusterChains {
		t.Run(c.name, func(t *testing.T) {
			srv := newChainServer(t, "new")
			src, _, _ := newSource(t, storeWithToken("new"), "old", nil)
			cfg, proxy := c.config(t, srv, src)
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if code, body := get(t, hc, srv.URL+"/api/v1/pods"); code != http.StatusOK {
				t.Fatalf("LIST: %d %q, want 200 through the replay", code, body)
			}
			if got := srv.seen(); len(got) != 2 || got[0] != "old" || got[1] != "new" {
				t.Errorf("server saw tokens %q, want [old new]", got)
			}
			if c.proxyHeader { // the stand-in sat where Karmada's does: right above *http.Transport
				hs := proxy.connectHeaders()
				if len(hs) == 0 || hs[0].Get(testProxyHeader) != "on" {
					t.Errorf("CONNECT headers %v, want %s from the proxy-header wrapper", hs, testProxyHeader)
				}
			}
		})
	}
}

// TestPostIsNotReplayedThroughAHiddenChain: below a wrapper that does not
// say what it wraps, only a request net/http itself would send again (an
// idempotent method) is replayed. A POST, the method of every SPDY upgrade,
// gets its 401; the next request carries the new token.
func TestPostIsNotReplayedThroughAHiddenChain(t *testing.T) {
	srv := newChainServer(t, "new")
	src, _, _ := newSource(t, storeWithToken("new"), "old", nil)
	hc := &http.Client{Transport: src.WrapTransport(&proxyHeaderStandIn{roundTripper: srv.Client().Transport})}

	resp, err := hc.Post(srv.URL+"/api/v1/namespaces/default/pods", "application/json", bytes.NewReader([]byte(`{"kind":"Pod"}`)))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST: %d, want the 401", resp.StatusCode)
	}
	if got := srv.seen(); len(got) != 1 {
		t.Errorf("server saw tokens %q, want the POST sent once", got)
	}
	if code, _ := get(t, hc, srv.URL+"/api/v1/pods"); code != http.StatusOK {
		t.Errorf("next request: %d, want 200 with the token the 401 made us read", code)
	}
}

// TestUpgradeHeaderIsNeverReplayed is issue 28 finding 9: a request asking
// for an upgrade itself (net/http's Transport supports Upgrade) is sent once
// even through a chain that is plain *http.Transport, by the member wrapper
// and by the own-credential guard alike.
func TestUpgradeHeaderIsNeverReplayed(t *testing.T) {
	wrappers := map[string]func(t *testing.T, next http.RoundTripper) http.RoundTripper{
		"member": func(t *testing.T, next http.RoundTripper) http.RoundTripper {
			src, _, _ := newSource(t, storeWithToken("new"), "old", nil)
			return src.WrapTransport(next)
		},
		"own-credential guard": func(t *testing.T, next http.RoundTripper) http.RoundTripper {
			tokenFile := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(tokenFile, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cred := newOwnCredential(&rest.Config{BearerTokenFile: tokenFile}) // remembers "old", as the bearer wrapper serves it
			if err := os.WriteFile(tokenFile, []byte("new\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			rt := &ownCredentialRoundTripper{guard: newGuard(t, OwnCredentialGuardOptions{}).guard, cred: cred, next: next}
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				req = req.Clone(req.Context())
				req.Header.Set("Authorization", "Bearer old") // client-go's bearer wrapper, outside the guard
				return rt.RoundTrip(req)
			})
		},
	}
	for name, wrap := range wrappers {
		t.Run(name, func(t *testing.T) {
			srv := newChainServer(t, "new")
			hc := &http.Client{Transport: wrap(t, srv.Client().Transport)}

			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/p/attach", nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "SPDY/3.1")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("upgrade: %d, want the 401", resp.StatusCode)
			}
			if n := srv.upgrades.Load(); n != 1 {
				t.Errorf("server saw the upgrade %d times (tokens %q), want once", n, srv.seen())
			}
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// upgradeRefusal answers every request as client-go's WebSocket round
// tripper does a refused upgrade: an error, no response.
type upgradeRefusal struct{ calls atomic.Int64 }

func (u *upgradeRefusal) RoundTrip(*http.Request) (*http.Response, error) {
	u.calls.Add(1)
	return nil, &httpstream.UpgradeFailureError{Cause: apierrors.NewUnauthorized("Unauthorized")} // the Status it decodes from the 401
}

// TestWebSocketRefusalBehindAHiddenWrapperIsCounted: the WebSocket round
// tripper reports a 401 as an error; behind the proxy-header wrapper it is
// still counted, and the Secret read so that the next stream carries the
// new token.
func TestWebSocketRefusalBehindAHiddenWrapperIsCounted(t *testing.T) {
	st := storeWithToken("new")
	m, _ := newTestMetrics(t)
	src, _, _ := newSource(t, st, "old", m)
	inner := &upgradeRefusal{}
	rt := src.WrapTransport(&proxyHeaderStandIn{roundTripper: inner})

	req, _ := http.NewRequest(http.MethodGet, "https://member.invalid/api/v1/namespaces/default/pods/p/exec", nil)
	req.Header["Sec-Websocket-Protocol"] = []string{"v5.channel.k8s.io"}
	if _, err := rt.RoundTrip(req); err == nil {
		t.Fatal("RoundTrip succeeded, want the upgrade error")
	}
	if n := inner.calls.Load(); n != 1 {
		t.Errorf("upgrade sent %d times, want once", n)
	}
	if got := counter(t, m.unauthorized, "member1"); got != 1 {
		t.Fatalf("unauthorized_total = %d, want 1", got)
	}
	waitFor(t, "the Secret read the refusal starts", func() bool { return st.calls.Load() == 1 && settled(src) })
}

// TestUpgradeBehindAHiddenWrapperDoesNotWaitForTheRead: an upgrade answered
// 401 cannot be replayed whatever the Secret holds, so it is returned at
// once, as through a recognised SPDY round tripper, not after a read of the
// Secret.
func TestUpgradeBehindAHiddenWrapperDoesNotWaitForTheRead(t *testing.T) {
	srv := newChainServer(t, "new")
	st := storeWithToken("new")
	st.gate = make(chan struct{})
	defer close(st.gate)
	src, _, _ := newSource(t, st, "old", nil)
	src.readWait = time.Hour // only the answer "not replayable" can return early
	hc := &http.Client{Transport: src.WrapTransport(&proxyHeaderStandIn{roundTripper: srv.Client().Transport})}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods/p/exec", nil)
	req.Header.Add(httpstream.HeaderProtocolVersion, "v5.channel.k8s.io") // what spdy.Negotiate adds above every wrapper
	var resp *http.Response
	var err error
	waitUnblocked(t, "a refused upgrade", func() { resp, err = hc.Do(req) })
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("upgrade: %d, want the 401", resp.StatusCode)
	}
}
