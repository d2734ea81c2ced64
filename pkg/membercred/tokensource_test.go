package membercred

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestInitialTokenCostsNoRead(t *testing.T) {
	st := storeWithToken("from-secret")
	src, _, _ := newSource(t, st, "initial", nil)

	tok, err := src.Token()
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	if tok.AccessToken != "initial" || tok.TokenType != "Bearer" {
		t.Errorf("Token = %q %q, want the initial token as Bearer", tok.AccessToken, tok.TokenType)
	}
	if n := st.calls.Load(); n != 0 {
		t.Errorf("getter called %d times, want 0: InitialToken counts as fresh", n)
	}
	if h := src.Health(); !h.HasToken || !h.LastRefresh.Equal(epoch) {
		t.Errorf("Health = %+v, want HasToken and LastRefresh at creation", h)
	}
}

func TestFirstTokenIsReadOnDemand(t *testing.T) {
	st := storeWithToken("from-secret")
	src, _, _ := newSource(t, st, "", nil)

	tok, err := src.Token()
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	if tok.AccessToken != "from-secret" {
		t.Errorf("Token = %q, want the Secret's token", tok.AccessToken)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times, want 1", n)
	}
}

func TestPeriodicRefreshServesStaleThenRotated(t *testing.T) {
	srv := newAPIServer(t, "old", "new")
	st := storeWithToken("new")
	src, clk, _ := newSource(t, st, "old", nil)
	c := client(srv, src)

	step(clk, DefaultRefreshPeriod-time.Second)
	get(t, c, srv.URL)
	if n := st.calls.Load(); n != 0 {
		t.Fatalf("getter called %d times before the period elapsed, want 0", n)
	}

	step(clk, time.Second)
	get(t, c, srv.URL) // notices expiry: served with the stale token, refresh in background
	waitFor(t, "the background refresh", func() bool { return settled(src) && src.Health().LastRefresh.Equal(clk.Now()) })
	get(t, c, srv.URL)

	var auths []string
	for _, r := range srv.requests() {
		auths = append(auths, r.authorization)
	}
	want := []string{"Bearer old", "Bearer old", "Bearer new"}
	if strings.Join(auths, ",") != strings.Join(want, ",") {
		t.Errorf("server saw %q, want %q", auths, want)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times, want 1 per period", n)
	}
}

// TestBurstOnEmptyCacheReadsOnce: 1,000 goroutines with nothing cached wait
// on ONE read.
func TestBurstOnEmptyCacheReadsOnce(t *testing.T) {
	st := storeWithToken("tok")
	st.gate, st.entered = make(chan struct{}), make(chan struct{}, 1)
	src, _, _ := newSource(t, st, "", nil)

	const callers = 1000
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := src.token(context.Background())
			if err == nil && tok.token != "tok" {
				err = errors.New("wrong token " + tok.token)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	<-st.entered // the single read is under way; callers queue behind it
	close(st.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times for %d concurrent callers, want exactly 1", n, callers)
	}
}

// countingTransport is a no-op inner round tripper recording Authorization.
type countingTransport struct {
	mu    sync.Mutex
	auths map[string]int
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.auths[req.Header.Get("Authorization")]++
	c.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// TestBurstOnExpiredCacheReadsOnceAndNeverBlocks: with a stale token cached,
// 1,000 requests complete while the one refresh is still blocked in the
// getter, and the getter runs exactly once.
func TestBurstOnExpiredCacheReadsOnceAndNeverBlocks(t *testing.T) {
	st := storeWithToken("new")
	st.gate = make(chan struct{})
	releaseGetter := sync.OnceFunc(func() { close(st.gate) })
	defer releaseGetter() // also when a failed assertion ends the test early
	src, clk, _ := newSource(t, st, "old", nil)
	inner := &countingTransport{auths: map[string]int{}}
	rt := src.WrapTransport(inner)
	step(clk, DefaultRefreshPeriod)

	const callers = 1000
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, "https://member.invalid/api", nil)
			if _, err := rt.RoundTrip(req); err != nil {
				t.Error(err)
			}
		}()
	}
	waitUnblocked(t, "1,000 requests with a stale token cached", wg.Wait)
	if got := inner.auths["Bearer old"]; got != callers {
		t.Errorf("%d requests carried the stale token, want all %d", got, callers)
	}
	releaseGetter()
	waitFor(t, "the refresh", func() bool { return settled(src) && src.Health().LastRefresh.Equal(clk.Now()) })
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times, want exactly 1", n)
	}
}

// TestSlowGetterDoesNotBlockRequests: against a TLS server, requests with a
// stale token cached finish while the getter is blocked.
func TestSlowGetterDoesNotBlockRequests(t *testing.T) {
	srv := newAPIServer(t, "old")
	st := storeWithToken("old")
	st.gate, st.entered = make(chan struct{}), make(chan struct{}, 1)
	defer close(st.gate)
	src, clk, _ := newSource(t, st, "old", nil)
	c := client(srv, src)
	step(clk, DefaultRefreshPeriod)

	waitUnblocked(t, "requests sent while the getter hangs", func() {
		for i := range 6 {
			if i == 1 {
				<-st.entered // the first request started a refresh, now blocked in the getter
			}
			resp, err := c.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200 with the stale token", resp.StatusCode)
			}
		}
	})
	if n := len(srv.requests()); n != 6 {
		t.Errorf("server saw %d requests, want 6", n)
	}
}

func TestGetterPanicIsABadRead(t *testing.T) {
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "ns", Name: "s", Logger: (&logLines{}).logger(),
		Getter: func(string, string) (*corev1.Secret, error) { panic("boom") },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Token()
	if !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), "getter panicked") {
		t.Errorf("Token error = %v, want ErrNoToken mentioning the panic", err)
	}
	if r := src.Health().LastErrorReason; r != ReasonGetError {
		t.Errorf("reason = %q, want %q", r, ReasonGetError)
	}
}

func TestDemandReadsAreSpacedByMinInterval(t *testing.T) {
	st := &secretStore{}
	st.setResult(notFound("member1"))
	src, clk, _ := newSource(t, st, "", nil)

	for range 3 {
		if _, err := src.Token(); err == nil {
			t.Fatal("Token succeeded without a Secret")
		}
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times within %s, want 1", n, MinForcedRefreshInterval)
	}
	step(clk, MinForcedRefreshInterval)
	st.set("tok")
	if _, err := src.Token(); err != nil {
		t.Fatalf("Token after the Secret appeared: %v", err)
	}
	if n := st.calls.Load(); n != 2 {
		t.Errorf("getter called %d times, want 2", n)
	}
}

func TestOptionsValidate(t *testing.T) {
	getter := storeWithToken("x").get
	valid := SecretTokenSourceOptions{Cluster: "c", Namespace: "ns", Name: "n", Getter: getter}
	tests := []struct {
		name   string
		mutate func(*SecretTokenSourceOptions)
		field  string // "" = valid
	}{
		{"valid", func(*SecretTokenSourceOptions) {}, ""},
		{"defaults", func(o *SecretTokenSourceOptions) { o.RefreshPeriod = 0 }, ""},
		{"no cluster", func(o *SecretTokenSourceOptions) { o.Cluster = "" }, "Cluster"},
		{"no namespace", func(o *SecretTokenSourceOptions) { o.Namespace = "" }, "Namespace"},
		{"no name", func(o *SecretTokenSourceOptions) { o.Name = "" }, "Name"},
		{"no getter", func(o *SecretTokenSourceOptions) { o.Getter = nil }, "Getter"},
		{"negative period", func(o *SecretTokenSourceOptions) { o.RefreshPeriod = -time.Second }, "RefreshPeriod"},
		{"blank initial token", func(o *SecretTokenSourceOptions) { o.InitialToken = " \n" }, "InitialToken"},
		{"initial token with a space", func(o *SecretTokenSourceOptions) { o.InitialToken = "se cret" }, "InitialToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid
			tt.mutate(&o)
			err := o.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.field)
			}
			assertNoLeak(t, "se cret", err.Error())
			if _, err := NewSecretTokenSource(o); err == nil {
				t.Error("NewSecretTokenSource accepted invalid options")
			}
		})
	}
}
