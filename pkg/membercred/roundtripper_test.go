package membercred

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

func newTestMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	return m, reg
}

func counter(t *testing.T, v *prometheus.CounterVec, labels ...string) int {
	t.Helper()
	return int(testutil.ToFloat64(v.WithLabelValues(labels...)))
}

// TestHardRevocationIsInvisibleToCallers: the old token is revoked while the
// Secret already holds the new one; the caller never sees the 401.
func TestHardRevocationIsInvisibleToCallers(t *testing.T) {
	tests := []struct {
		name string
		req  func(url string) *http.Request
		body string
	}{
		{"GET", func(url string) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, url, nil)
			return r
		}, ""},
		{"POST with GetBody", func(url string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"kind":"Pod"}`)))
			return r
		}, `{"kind":"Pod"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t, "new") // "old" is revoked
			st := storeWithToken("new")
			m, _ := newTestMetrics(t)
			src, _, _ := newSource(t, st, "old", m)

			resp, err := client(srv, src).Do(tt.req(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "ok" {
				t.Fatalf("caller got %d %q, want 200: the 401 must be replayed away", resp.StatusCode, body)
			}
			seen := srv.requests()
			if len(seen) != 2 || seen[0].authorization != "Bearer old" || seen[1].authorization != "Bearer new" {
				t.Fatalf("server saw %+v, want the old token then one replay with the new", seen)
			}
			for i, r := range seen {
				if r.body != tt.body {
					t.Errorf("request %d body = %q, want %q", i, r.body, tt.body)
				}
			}
			if got := counter(t, m.unauthorized, "member1"); got != 1 {
				t.Errorf("unauthorized_total = %d, want 1", got)
			}
			if got := counter(t, m.unauthorizedRecovered, "member1"); got != 1 {
				t.Errorf("unauthorized_recovered_total = %d, want 1", got)
			}
			if got := counter(t, m.unauthorizedPersisted, "member1"); got != 0 {
				t.Errorf("unauthorized_persisted_total = %d, want 0", got)
			}
			if n := st.calls.Load(); n != 1 {
				t.Errorf("getter called %d times, want 1 forced read", n)
			}
		})
	}
}

// TestPersistent401 covers a Secret whose token the member rejects: the 401
// reaches the caller with its body, and the request is sent at most twice.
func TestPersistent401(t *testing.T) {
	tests := []struct {
		name         string
		secretToken  string // the token the forced read finds
		wantRequests int
	}{
		{"secret unchanged: no replay", "old", 1},
		{"secret changed but also rejected: one replay", "newer-but-bad", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t) // accepts nothing
			st := storeWithToken(tt.secretToken)
			m, _ := newTestMetrics(t)
			src, _, _ := newSource(t, st, "old", m)

			code, body := get(t, client(srv, src), srv.URL)
			if code != http.StatusUnauthorized || body != unauthorizedBody {
				t.Fatalf("caller got %d %q, want the 401 with its body intact", code, body)
			}
			if n := len(srv.requests()); n != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", n, tt.wantRequests)
			}
			if got := counter(t, m.unauthorizedPersisted, "member1"); got != 1 {
				t.Errorf("unauthorized_persisted_total = %d, want 1", got)
			}
			if h := src.Health(); h.ConsecutivePersisted401s != 1 || h.Err() == nil {
				t.Errorf("Health = %+v, want one persisted 401 reported", h)
			}
		})
	}
}

// TestPersisting401LogsOncePerStateChange: many persisting 401s, one line;
// recovery, one line; both name the cluster and the Secret.
func TestPersisting401LogsOncePerStateChange(t *testing.T) {
	srv := newAPIServer(t)
	st := storeWithToken("old")
	src, clk, logs := newSource(t, st, "old", nil)
	c := client(srv, src)

	for range 5 {
		get(t, c, srv.URL)
		step(clk, MinForcedRefreshInterval) // every 401 forces a real read
	}
	if n := st.calls.Load(); n != 5 {
		t.Errorf("getter called %d times, want 5 (one forced read per spaced 401)", n)
	}
	srv.accept("old")
	get(t, c, srv.URL)
	get(t, c, srv.URL)

	rejects := logs.containing("rejects its credential")
	recovers := logs.containing("accepts its credential again")
	if len(rejects) != 1 || len(recovers) != 1 {
		t.Fatalf("log lines: %d 'rejects', %d 'accepts', want 1 each; all: %q", len(rejects), len(recovers), logs.all())
	}
	for _, line := range append(rejects, recovers...) {
		if !strings.Contains(line, "member1") || !strings.Contains(line, "karmada-cluster/member1") {
			t.Errorf("log line %q does not name the cluster and the Secret", line)
		}
	}
	if h := src.Health(); h.ConsecutivePersisted401s != 0 {
		t.Errorf("ConsecutivePersisted401s = %d after success, want 0", h.ConsecutivePersisted401s)
	}
}

// TestUnauthorizedStormReadsOnce: concurrent requests that all 401 with the
// revoked token trigger one read, and all of them are replayed.
func TestUnauthorizedStormReadsOnce(t *testing.T) {
	srv := newAPIServer(t, "new")
	st := storeWithToken("new")
	src, _, _ := newSource(t, st, "old", nil)
	c := client(srv, src)

	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times for a storm of 401s, want 1", n)
	}
}

// onceReader is a body without GetBody: it cannot be produced again.
type onceReader struct{ io.Reader }

func TestNonReplayableBodyIsNotRetried(t *testing.T) {
	srv := newAPIServer(t, "new")
	st := storeWithToken("new")
	src, _, _ := newSource(t, st, "old", nil)
	c := client(srv, src)

	req, _ := http.NewRequest(http.MethodPost, srv.URL, onceReader{strings.NewReader("payload")})
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || string(body) != unauthorizedBody {
		t.Fatalf("got %d %q, want the 401 untouched", resp.StatusCode, body)
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("server saw %d requests, want 1: the body cannot be sent again", n)
	}
	// The forced read still happened: the next request carries the new token.
	if code, _ := get(t, c, srv.URL); code != http.StatusOK {
		t.Errorf("next request got %d, want 200 with the new token", code)
	}
}

func TestExistingAuthorizationIsLeftAlone(t *testing.T) {
	srv := newAPIServer(t, "explicit")
	st := storeWithToken("from-secret")
	src, _, _ := newSource(t, st, "", nil)

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer explicit")
	resp, err := client(srv, src).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen := srv.requests(); len(seen) != 1 || seen[0].authorization != "Bearer explicit" {
		t.Errorf("server saw %+v, want the caller's own Authorization", seen)
	}
	if n := st.calls.Load(); n != 0 {
		t.Errorf("getter called %d times, want 0", n)
	}
}

func TestCallerRequestIsNotMutated(t *testing.T) {
	srv := newAPIServer(t, "new")
	st := storeWithToken("new")
	src, _, _ := newSource(t, st, "old", nil)

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("X-Probe", "1")
	resp, err := client(srv, src).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(req.Header) != 1 || req.Header.Get("Authorization") != "" {
		t.Errorf("caller's request headers changed to %v", req.Header)
	}
}

// TestBadSecretInput: every way a Secret read can fail keeps the last good
// token, is counted by reason and logged once per change of state; with no
// token ever read, requests fail naming cluster and Secret and are not sent.
func TestBadSecretInput(t *testing.T) {
	const goodToken = "good-tok-7f3a"
	tests := []struct {
		name   string
		result func() (*corev1.Secret, error)
		reason string
	}{
		{"getter error", func() (*corev1.Secret, error) { return nil, errors.New("connection refused") }, ReasonGetError},
		{"not found (controller-runtime style)", func() (*corev1.Secret, error) { return notFound("member1") }, ReasonNotFound},
		{"nil secret", func() (*corev1.Secret, error) { return nil, nil }, ReasonNilSecret},
		{"nil data", func() (*corev1.Secret, error) { return &corev1.Secret{}, nil }, ReasonMissingKey},
		{"missing key", func() (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{"caBundle": []byte("ca")}}, nil
		}, ReasonMissingKey},
		{"empty token", func() (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: {}}}, nil
		}, ReasonEmptyToken},
		{"whitespace token", func() (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(" \n\t")}}, nil
		}, ReasonEmptyToken},
		{"token with inner newline", func() (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte("abc\ndef")}}, nil
		}, ReasonInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/keeps last good token", func(t *testing.T) {
			srv := newAPIServer(t, goodToken)
			st := &secretStore{}
			st.setResult(tt.result())
			m, _ := newTestMetrics(t)
			src, clk, logs := newSource(t, st, goodToken, m)
			c := client(srv, src)

			for i := 1; i <= 3; i++ {
				step(clk, DefaultRefreshPeriod)
				get(t, c, srv.URL) // starts a failing read
				waitFor(t, "the failed read", func() bool { return settled(src) && src.Health().ConsecutiveRefreshFailures == i })
			}
			if code, _ := get(t, c, srv.URL); code != http.StatusOK {
				t.Fatalf("status %d, want 200 with the last good token", code)
			}
			h := src.Health()
			if h.LastErrorReason != tt.reason || !h.HasToken || h.LastError == "" {
				t.Errorf("Health = %+v, want reason %q with the token kept", h, tt.reason)
			}
			if got := counter(t, m.refreshFailures, "member1", tt.reason); got != 3 {
				t.Errorf("refresh_failures_total{reason=%q} = %d, want 3", tt.reason, got)
			}
			if n := len(logs.containing("Cannot read the member cluster token")); n != 1 {
				t.Errorf("%d failure log lines for 3 identical failures, want 1: %q", n, logs.all())
			}

			st.set(goodToken)
			step(clk, DefaultRefreshPeriod)
			get(t, c, srv.URL)
			waitFor(t, "the recovering read", func() bool { return settled(src) && src.Health().LastError == "" })
			if n := len(logs.containing("readable from its Secret again")); n != 1 {
				t.Errorf("%d recovery log lines, want 1", n)
			}
			assertNoLeak(t, goodToken, append(logs.all(), h.LastError, fmtErr(h.Err()))...)
		})

		t.Run(tt.name+"/no token ever: not sent", func(t *testing.T) {
			srv := newAPIServer(t)
			st := &secretStore{}
			st.setResult(tt.result())
			src, _, _ := newSource(t, st, "", nil)

			_, err := client(srv, src).Get(srv.URL)
			if err == nil {
				t.Fatal("request succeeded without any token")
			}
			if !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), `"member1"`) || !strings.Contains(err.Error(), "karmada-cluster/member1") {
				t.Errorf("error %q does not name the cluster and the Secret", err)
			}
			if n := len(srv.requests()); n != 0 {
				t.Errorf("server saw %d requests, want 0: never send unauthenticated", n)
			}
		})
	}
}

func TestTokenIsTrimmed(t *testing.T) {
	srv := newAPIServer(t, "tok")
	st := storeWithToken("tok\n") // kubectl create secret --from-file=token
	src, _, _ := newSource(t, st, "", nil)
	if code, _ := get(t, client(srv, src), srv.URL); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
	if seen := srv.requests(); seen[0].authorization != "Bearer tok" {
		t.Errorf("Authorization %q, want the trimmed token", seen[0].authorization)
	}
}

// TestTokenNeverLeaks drives every path that logs, errs or counts, with a
// getter error that itself quotes the token, and scans all output.
func TestTokenNeverLeaks(t *testing.T) {
	const secret = "s3cr3t-token-value"
	srv := newAPIServer(t)
	st := storeWithToken(secret)
	m, reg := newTestMetrics(t)
	src, clk, logs := newSource(t, st, "", m)
	c := client(srv, src)

	get(t, c, srv.URL) // persisting 401
	st.setResult(nil, errors.New("weird backend echoing "+secret))
	step(clk, DefaultRefreshPeriod)
	get(t, c, srv.URL)
	waitFor(t, "the failed read", func() bool { return settled(src) && src.Health().LastError != "" })
	srv.accept(secret)
	get(t, c, srv.URL)

	h := src.Health()
	texts := append(logs.all(), h.LastError, fmtErr(h.Err()), h.Cluster, h.Secret)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		texts = append(texts, mf.String())
	}
	assertNoLeak(t, secret, texts...)
	if !strings.Contains(h.LastError, "[redacted]") {
		t.Errorf("LastError = %q, want the echoed token redacted", h.LastError)
	}
}

// TestRestConfigWrap: the intended installation, through rest.Config.
func TestRestConfigWrap(t *testing.T) {
	srv := newAPIServer(t, "new")
	st := storeWithToken("new")
	src, _, _ := newSource(t, st, "old", nil)

	cfg := restConfigFor(t, srv)
	cfg.Wrap(src.WrapTransport)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, hc, srv.URL+"/api"); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
}

// cancelRecorder stands for an inner transport with the legacy
// CancelRequest method.
type cancelRecorder struct {
	countingTransport
	cancelled []*http.Request
}

func (c *cancelRecorder) CancelRequest(req *http.Request) { c.cancelled = append(c.cancelled, req) }

func TestWrappersExposeInnerAndPassCancel(t *testing.T) {
	src, _, _ := newSource(t, storeWithToken("t"), "t", nil)
	g, err := NewOwnCredentialGuard(OwnCredentialGuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wrappers := map[string]func(http.RoundTripper) http.RoundTripper{
		"member": src.WrapTransport,
		"guard": func(rt http.RoundTripper) http.RoundTripper {
			return &ownCredentialRoundTripper{guard: g, next: rt}
		},
	}
	for name, wrap := range wrappers {
		t.Run(name, func(t *testing.T) {
			inner := &cancelRecorder{}
			rt := wrap(inner)
			if got := rt.(interface{ WrappedRoundTripper() http.RoundTripper }).WrappedRoundTripper(); got != inner {
				t.Errorf("WrappedRoundTripper() = %T, want the inner transport", got)
			}
			req, _ := http.NewRequest(http.MethodGet, "https://member.invalid/", nil)
			rt.(interface{ CancelRequest(*http.Request) }).CancelRequest(req)
			if len(inner.cancelled) != 1 || inner.cancelled[0] != req {
				t.Errorf("CancelRequest reached the inner transport %d times, want once", len(inner.cancelled))
			}
		})
	}
}

// TestGivingUpOnFirstReadSendsNothing: a caller whose context ends while the
// first read hangs gets an error naming the cluster, and nothing is sent.
func TestGivingUpOnFirstReadSendsNothing(t *testing.T) {
	srv := newAPIServer(t)
	st := storeWithToken("tok")
	st.gate = make(chan struct{})
	defer close(st.gate)
	src, _, _ := newSource(t, st, "", nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	var err error
	waitUnblocked(t, "a cancelled request", func() { _, err = client(srv, src).Do(req) })
	if err == nil || !strings.Contains(err.Error(), `"member1"`) {
		t.Errorf("error %v, want one naming the cluster", err)
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestHealthErr(t *testing.T) {
	base := Health{Cluster: "m1", Secret: "ns/s", HasToken: true}
	tests := []struct {
		name   string
		edit   func(*Health)
		substr string // "" = healthy
	}{
		{"healthy", func(*Health) {}, ""},
		{"no token", func(h *Health) { h.HasToken, h.LastError = false, "not found" }, "no bearer token from Secret ns/s: not found"},
		{"persisted 401", func(h *Health) { h.ConsecutivePersisted401s = 2 }, "rejects the token in Secret ns/s"},
		{"refresh failing", func(h *Health) { h.LastError, h.ConsecutiveRefreshFailures = "not found", 3 }, "keeping the last good token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := base
			tt.edit(&h)
			err := h.Err()
			if (err == nil) != (tt.substr == "") || (err != nil && !strings.Contains(err.Error(), tt.substr)) {
				t.Errorf("Err() = %v, want %q", err, tt.substr)
			}
		})
	}
}
