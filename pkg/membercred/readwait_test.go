package membercred

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// heldGetter is a SecretGetter whose every call reports its index on
// started and then blocks until the test releases that call; each call
// returns the Secret holding token.
type heldGetter struct {
	token   string
	started chan int
	n       atomic.Int32

	mu      sync.Mutex
	release map[int]chan struct{}
}

func newHeldGetter(t *testing.T, token string) *heldGetter {
	g := &heldGetter{token: token, started: make(chan int, 16), release: map[int]chan struct{}{}}
	t.Cleanup(func() { // calls the test left hanging end with it
		g.mu.Lock()
		defer g.mu.Unlock()
		for i := range 16 {
			select {
			case <-g.gate(i):
			default:
				close(g.gate(i))
			}
		}
	})
	return g
}

// gate returns call i's release channel. Callers hold g.mu.
func (g *heldGetter) gate(i int) chan struct{} {
	if g.release[i] == nil {
		g.release[i] = make(chan struct{})
	}
	return g.release[i]
}

func (g *heldGetter) get(string, string) (*corev1.Secret, error) {
	i := int(g.n.Add(1)) - 1
	g.started <- i
	g.mu.Lock()
	gate := g.gate(i)
	g.mu.Unlock()
	<-gate
	return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(g.token)}}, nil
}

// let releases call i.
func (g *heldGetter) let(i int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.gate(i))
}

// awaitCall waits until call i has started.
func (g *heldGetter) awaitCall(t *testing.T, i int) {
	t.Helper()
	waitFor(t, "a getter call", func() bool { return int(g.n.Load()) > i })
}

// TestUnauthorizedWaitIsBoundedByOneMaxReadWait: a 401 arrives while a
// periodic read is under way. The request waits that read out, then waits
// for a read of its own; MaxReadWait bounds both together, not each. With a
// fake clock: half of MaxReadWait passes on the periodic read, the second
// half on the request's own read, and then the request must return its 401
// although its own read is still hanging.
func TestUnauthorizedWaitIsBoundedByOneMaxReadWait(t *testing.T) {
	srv := newAPIServer(t) // rejects everything
	g := newHeldGetter(t, "old")
	clk := testingclock.NewFakeClock(epoch)
	m, _ := newTestMetrics(t)
	logs := &logLines{}
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
		Getter: g.get, InitialToken: "old", Metrics: m, Logger: logs.logger(), Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultRefreshPeriod) // the next request starts a periodic read

	type result struct {
		code int
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client(srv, src).Get(srv.URL)
		if err != nil {
			t.Errorf("GET: %v", err)
			done <- result{}
			return
		}
		defer resp.Body.Close()
		done <- result{code: resp.StatusCode}
	}()

	g.awaitCall(t, 0) // the periodic read, held
	waitFor(t, "the 401 to wait for the periodic read", clk.HasWaiters)
	clk.Step(MaxReadWait / 2)
	g.let(0)          // the periodic read returns the rejected token
	g.awaitCall(t, 1) // the request's own read, held for good
	clk.Step(MaxReadWait - MaxReadWait/2)

	var got result
	waitUnblocked(t, "a 401 after one MaxReadWait in all", func() { got = <-done })
	if got.code != http.StatusUnauthorized {
		t.Errorf("status %d, want the original 401", got.code)
	}
	if n := g.n.Load(); n != 2 {
		t.Errorf("getter called %d times, want 2 (the periodic read, then the 401's)", n)
	}
	if c := counter(t, m.unauthorizedPersisted, "member1"); c != 0 {
		t.Errorf("unauthorized_persisted_total = %d, want 0: the request's read never completed", c)
	}
}
