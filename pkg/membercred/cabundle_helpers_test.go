package membercred

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// testCA is a certificate authority for tests: a root, or an intermediate
// when parent is set.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial atomic.Int64

func newTestCA(t testing.TB, cn string, parent *testCA) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// leafOpts describes a serving certificate; the zero value is one valid for
// 127.0.0.1 now.
type leafOpts struct {
	dnsNames []string
	ips      []net.IP
	expired  bool
}

// serving issues a serving certificate; chain adds the issuing
// intermediates, leaf first, as a server sends them.
func (ca *testCA) serving(t testing.TB, o leafOpts, chain ...*testCA) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if o.dnsNames == nil && o.ips == nil {
		o.ips = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	notAfter := time.Now().Add(time.Hour)
	if o.expired {
		notAfter = time.Now().Add(-time.Minute)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: "member-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     o.dnsNames,
		IPAddresses:  o.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	out := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.cert.Raw)
	}
	return out
}

func bundle(cas ...*testCA) []byte {
	var out []byte
	for _, ca := range cas {
		out = append(out, ca.pem()...)
	}
	return out
}

// tlsMember is a member API server whose serving certificate can be
// replaced, as restarting the kube-apiserver on the same port with a
// certificate from a new CA does. It counts the connections it accepted and
// saw closed.
type tlsMember struct {
	*httptest.Server
	cert     atomic.Pointer[tls.Certificate]
	accepted atomic.Int64
	closed   atomic.Int64
}

func newTLSMember(t testing.TB, cert tls.Certificate, http2 bool) *tlsMember {
	t.Helper()
	return newTLSMemberOn(t, "", nil, cert, http2)
}

// newTLSMemberOn is newTLSMember listening on addr (127.0.0.1:0 when
// empty) and answering with handler (a 200 "ok" when nil).
func newTLSMemberOn(t testing.TB, addr string, handler http.Handler, cert tls.Certificate, http2 bool) *tlsMember {
	t.Helper()
	return startTLSMember(t, addr, handler, cert, http2, nil)
}

// startTLSMember is newTLSMemberOn whose server, with clientCAs set,
// verifies a client certificate against them when the client sends one, as
// a kube-apiserver with --client-ca-file does.
func startTLSMember(t testing.TB, addr string, handler http.Handler, cert tls.Certificate, http2 bool, clientCAs *x509.CertPool) *tlsMember {
	t.Helper()
	m := &tlsMember{}
	m.cert.Store(&cert)
	if handler == nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "ok")
		})
	}
	m.Server = httptest.NewUnstartedServer(handler)
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		m.Listener.Close()
		m.Listener = l
	}
	m.Config.ErrorLog = log.New(io.Discard, "", 0)
	m.EnableHTTP2 = http2
	m.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			m.accepted.Add(1)
		case http.StateClosed:
			m.closed.Add(1)
		}
	}
	protos := []string{"http/1.1"}
	if http2 {
		protos = []string{"h2", "http/1.1"}
	}
	// GetConfigForClient, not GetCertificate: httptest fills Certificates,
	// which crypto/tls prefers for a client that sends no SNI (an IP).
	m.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		cfg := &tls.Config{Certificates: []tls.Certificate{*m.cert.Load()}, NextProtos: protos}
		if clientCAs != nil {
			cfg.ClientAuth, cfg.ClientCAs = tls.VerifyClientCertIfGiven, clientCAs
		}
		return cfg, nil
	}}
	m.StartTLS()
	t.Cleanup(m.Close)
	return m
}

// restartWith serves cert from now on and drops every connection, as a
// restarted API server does.
func (m *tlsMember) restartWith(cert tls.Certificate) {
	m.cert.Store(&cert)
	m.CloseClientConnections()
}

// caSecretStore is a SecretGetter over a Secret holding a token and a CA
// bundle, counting calls.
type caSecretStore struct {
	mu     sync.Mutex
	secret *corev1.Secret
	calls  atomic.Int64
}

func newCASecretStore(token string, caBundle []byte) *caSecretStore {
	return &caSecretStore{secret: &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(token), SecretCABundleKey: caBundle}}}
}

func (st *caSecretStore) setCA(caBundle []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.secret = st.secret.DeepCopy()
	st.secret.Data[SecretCABundleKey] = caBundle
}

func (st *caSecretStore) removeCA() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.secret = st.secret.DeepCopy()
	delete(st.secret.Data, SecretCABundleKey)
}

func (st *caSecretStore) get(string, string) (*corev1.Secret, error) {
	st.calls.Add(1)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.secret.DeepCopy(), nil
}

// memberConfig builds a member config as patched BuildClusterConfig does:
// the token wrapper, then the CA bundle, from the Secret as read now.
func memberConfig(t testing.TB, src *SecretTokenSource, st *caSecretStore, host string) *rest.Config {
	t.Helper()
	secret, _ := st.get("", "")
	st.calls.Add(-1) // BuildClusterConfig's own read, not the source's
	cfg := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: secret.Data[SecretCABundleKey]}}
	cfg.Wrap(src.WrapTransport)
	src.TrustSecretCABundle(cfg)
	return cfg
}

func newCASource(t testing.TB, st *caSecretStore, opts ...func(*SecretTokenSourceOptions)) *SecretTokenSource {
	t.Helper()
	o := SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
		Getter: st.get, InitialToken: "tok", Logger: discardLogger(),
	}
	for _, f := range opts {
		f(&o)
	}
	src, err := NewSecretTokenSource(o)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func httpClient(t testing.TB, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("rest.HTTPClientFor: %v", err)
	}
	return c
}

func fetchOK(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

func discardLogger() logr.Logger { return funcr.New(func(string, string) {}, funcr.Options{}) }

// tunnelProxy is an HTTP CONNECT proxy, what a Cluster's spec.proxyURL
// points at. (replay_chain_hostonly_test.go has a recording one; host-only
// tests are not carried into upstream trees, so it uses this file's
// tunnelConnect, not the other way round.)
func tunnelProxy(t testing.TB) *httptest.Server {
	t.Helper()
	p := httptest.NewUnstartedServer(http.HandlerFunc(tunnelConnect))
	p.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.Start()
	t.Cleanup(p.Close)
	return p
}

// tunnelConnect answers an HTTP CONNECT as a proxy does: it dials r.Host
// and copies bytes both ways until either side closes.
func tunnelConnect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	upstream, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	down, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	_, _ = io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() {
		_, _ = io.Copy(upstream, buf) // what the client sent after the CONNECT, then the rest
		_ = upstream.(*net.TCPConn).CloseWrite()
	}()
	go func() {
		_, _ = io.Copy(down, upstream)
		down.Close()
		upstream.Close()
	}()
}
