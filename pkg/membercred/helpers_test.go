package membercred

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`

// apiServer is an httptest TLS server standing in for a member or own API
// server: it accepts the tokens it is told to, answers 401 with a Status body
// otherwise, and records what it saw.
type apiServer struct {
	*httptest.Server

	mu       sync.Mutex
	accepted map[string]bool
	status   int // when non-zero, answer every request with this status (401 with its Status body)
	seen     []seenRequest
}

type seenRequest struct {
	authorization string
	body          string
}

func newAPIServer(t *testing.T, tokens ...string) *apiServer {
	t.Helper()
	s := &apiServer{accepted: map[string]bool{}}
	s.accept(tokens...)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve)) // binds 127.0.0.1
	// Closing the server at cleanup aborts handshakes of connections the
	// client dialled but no longer needs; that is not worth a log line.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	s.seen = append(s.seen, seenRequest{authorization: auth, body: string(body)})
	ok := s.accepted[strings.TrimPrefix(auth, "Bearer ")]
	status := s.status
	s.mu.Unlock()
	switch {
	case status != 0 && status != http.StatusUnauthorized:
		w.WriteHeader(status)
	case ok && status == 0:
		_, _ = io.WriteString(w, "ok")
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, unauthorizedBody)
	}
}

// accept replaces the set of accepted tokens (revoking all others).
func (s *apiServer) accept(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted = map[string]bool{}
	for _, t := range tokens {
		s.accepted[t] = true
	}
}

func (s *apiServer) answer(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

func (s *apiServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

// secretStore is a SecretGetter over a mutable Secret, counting calls. With
// gate set, each call blocks until gate is closed (or receives a value).
type secretStore struct {
	mu     sync.Mutex
	secret *corev1.Secret
	err    error
	gate   chan struct{}
	calls  atomic.Int64
	// entered, if non-nil, receives when a call starts (before blocking on
	// gate) and has room; give it a buffer of 1 to learn of the first call.
	entered chan struct{}
}

func storeWithToken(token string) *secretStore {
	st := &secretStore{}
	st.set(token)
	return st
}

func (st *secretStore) set(token string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.secret = &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(token), "caBundle": []byte("ca")}}
	st.err = nil
}

func (st *secretStore) setResult(secret *corev1.Secret, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.secret, st.err = secret, err
}

func (st *secretStore) get(namespace, name string) (*corev1.Secret, error) {
	st.calls.Add(1)
	st.mu.Lock()
	gate, entered := st.gate, st.entered
	st.mu.Unlock()
	if entered != nil {
		select { // only the first call signals; later ones must not hang here
		case entered <- struct{}{}:
		default:
		}
	}
	if gate != nil {
		<-gate
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.secret, st.err
}

// notFound is what Karmada's controller-runtime getter returns for a missing
// Secret: a non-nil empty Secret AND a NotFound error.
func notFound(name string) (*corev1.Secret, error) {
	return &corev1.Secret{}, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// logLines captures log output through a logr sink.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *logLines) containing(sub string) []string {
	var out []string
	for _, line := range l.all() {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

var epoch = time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC)

func fakeClock() *testingclock.FakePassiveClock { return testingclock.NewFakePassiveClock(epoch) }

func step(c *testingclock.FakePassiveClock, d time.Duration) { c.SetTime(c.Now().Add(d)) }

// newSource builds a SecretTokenSource for tests with a fake clock and
// captured logs.
func newSource(t *testing.T, st *secretStore, initial string, m *Metrics) (*SecretTokenSource, *testingclock.FakePassiveClock, *logLines) {
	t.Helper()
	clk, logs := fakeClock(), &logLines{}
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
		Getter: st.get, InitialToken: initial, Metrics: m, Logger: logs.logger(), Clock: clk,
	})
	if err != nil {
		t.Fatalf("NewSecretTokenSource: %v", err)
	}
	return src, clk, logs
}

// client returns an http.Client that talks to srv through src's wrapper.
func client(srv *apiServer, src *SecretTokenSource) *http.Client {
	return &http.Client{Transport: src.WrapTransport(srv.Client().Transport)}
}

// waitFor polls cond until it holds; the test's own deadline bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // generous: a 2-core machine under -race
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp.StatusCode, string(body)
}

// assertNoLeak fails if any of texts contains token.
func assertNoLeak(t *testing.T, token string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, token) {
			t.Errorf("token leaked into %q", s)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprint(err)
}

// restConfigFor returns a rest.Config trusting srv's certificate, with no
// credential: the test adds one.
func restConfigFor(t *testing.T, srv *apiServer) *rest.Config {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// waitUnblocked runs f and fails the test if it has not returned within a
// bound far above any real run (it guards "never blocks" claims against a
// hang; it is not a speed assertion).
func waitUnblocked(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked behind a Secret read", what)
	}
}

// settled reports whether no read of the Secret is under way; a read's log
// lines and metrics are written before it counts as finished.
func settled(src *SecretTokenSource) bool { return !src.reading.Load() }
