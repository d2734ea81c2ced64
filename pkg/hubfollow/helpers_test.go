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

	"github.com/holdfast-dist/holdfast/pkg/hubfollow/hubfollowtest"
)

const (
	testNamespace = "kubeslice-acme"
	testCluster   = "worker-1"
	testPEM       = "-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n"
)

var testCABundle = base64.StdEncoding.EncodeToString([]byte(testPEM))

// fakeHub is a stand-in hub serving this worker's Cluster CR
// (hubfollowtest.Hub, which the overlay's glue tests use too). It answers
// 401 to any token but its own, so a client aimed at one hub with the other
// hub's credential fails as it would in production.
type fakeHub struct {
	*hubfollowtest.Hub
}

func newFakeHub(t *testing.T, token string) *fakeHub {
	t.Helper()
	return &fakeHub{hubfollowtest.NewHub(t, testNamespace, testCluster, token)}
}

func (h *fakeHub) respond(status int, body string) { h.Respond(status, []byte(body)) }

func (h *fakeHub) publishNothing() {
	h.respond(http.StatusOK, clusterJSON(nil))
}

// publish makes the hub declare identity at endpoint as Active.
func (h *fakeHub) publish(identity, endpoint, lastUpdated string) {
	h.respond(http.StatusOK, clusterJSON(map[string]interface{}{
		"endpoint": endpoint, "activeIdentity": identity, "caBundle": testCABundle, "lastUpdated": lastUpdated,
	}))
}

// clusterJSON is the Cluster with activeController written out by hand (a
// claim of any shape, malformed ones included) beside another status field
// the decoder must skip.
func clusterJSON(activeController map[string]interface{}) string {
	status := map[string]interface{}{"cniSubnet": []string{"10.1.0.0/16"}}
	if activeController != nil {
		status["activeController"] = activeController
	}
	b, err := json.Marshal(hubfollowtest.Cluster(testNamespace, testCluster, status))
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
		Endpoint:  h.URL(),
		TokenFile: writeFile(t, name+"-token", h.Token()),
		CAFile:    writeFile(t, name+"-ca.crt", string(h.CAPEM())),
	}
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
