package hubfollow

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

const (
	testNamespace = "kubeslice-acme"
	testCluster   = "worker-1"
	testPEM       = "-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n"
)

var testCABundle = base64.StdEncoding.EncodeToString([]byte(testPEM))

func clusterPath(namespace, name string) string {
	return "/apis/controller.kubeslice.io/v1alpha1/namespaces/" + namespace + "/clusters/" + name
}

// fakeHub is a hub API server serving this worker's Cluster CR. It answers
// 401 to any token but its own, so a client aimed at one hub with the other
// hub's credential fails as it would in production.
type fakeHub struct {
	srv      *httptest.Server
	requests atomic.Int64

	mu     sync.Mutex
	token  string
	status int
	body   []byte
}

func newFakeHub(t *testing.T, token string) *fakeHub {
	t.Helper()
	h := &fakeHub{token: token}
	h.publishNothing()
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	h.mu.Lock()
	token, status, body := h.token, h.status, h.body
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+token {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != clusterPath(testNamespace, testCluster) {
		writeStatus(w, http.StatusNotFound, "NotFound")
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeStatus(w http.ResponseWriter, code int, reason string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]interface{}{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
	})
}

// acceptOnly makes the hub accept only token, as after the worker's token was
// revoked and a new one minted.
func (h *fakeHub) acceptOnly(token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.token = token
}

func (h *fakeHub) respond(status int, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, []byte(body)
}

func (h *fakeHub) publishNothing() {
	h.respond(http.StatusOK, clusterJSON(nil))
}

// publish makes the hub declare identity at endpoint as Active.
func (h *fakeHub) publish(identity, endpoint, lastUpdated string) {
	h.respond(http.StatusOK, clusterJSON(map[string]interface{}{
		"endpoint": endpoint, "activeIdentity": identity, "caBundle": testCABundle, "lastUpdated": lastUpdated,
	}))
}

func clusterJSON(activeController map[string]interface{}) string {
	obj := map[string]interface{}{
		"apiVersion": "controller.kubeslice.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]interface{}{"name": testCluster, "namespace": testNamespace},
		"status":     map[string]interface{}{"cniSubnet": []string{"10.1.0.0/16"}},
	}
	if activeController != nil {
		obj["status"].(map[string]interface{})["activeController"] = activeController
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// connection returns a Connection for the hub in slot name, with its token
// and CA written to files as a mounted Secret would be.
func (h *fakeHub) connection(t *testing.T, name string) Connection {
	t.Helper()
	return Connection{
		Name:      name,
		Endpoint:  h.srv.URL,
		TokenFile: writeFile(t, name+"-token", h.currentToken()),
		CAFile:    writeFile(t, name+"-ca.crt", string(certPEM(h.srv))),
	}
}

func (h *fakeHub) currentToken() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.token
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hungServer accepts connections and never answers. With tlsCert set it
// completes the TLS handshake first, so the client hangs waiting for HTTP
// headers instead of in the handshake.
func hungServer(t *testing.T, tlsCert *tls.Certificate) (endpoint string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			if tlsCert != nil {
				tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*tlsCert}})
				// Bounded so a client that never handshakes cannot wedge
				// the accept loop past the test's cleanup.
				_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
				_ = tc.Handshake() // then never read or write
				_ = tc.SetDeadline(time.Time{})
				c = tc
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + ln.Addr().String(), accepted
}

// logSink collects log lines for assertions.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func newLogSink() (*logSink, logr.Logger) {
	s := &logSink{}
	return s, funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (s *logSink) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

func (s *logSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lines {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// envMap is a LookupEnvFunc over a map.
func envMap(m map[string]string) LookupEnvFunc {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}
