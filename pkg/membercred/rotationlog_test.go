package membercred

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2/textlogger"
)

// lockedBuffer is an io.Writer safe for the source's read goroutine and
// the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimRight(b.buf.String(), "\n"), "\n")
}

const rotatedLine = "Picked up a rotated member cluster token from its Secret"

// TestRotationIsLoggedOnceAtDefaultVerbosity: the line operators and the
// e2e suites (e2e/karmadacp MemberTokenPickedUp) look for after a rotation
// is logged exactly once per rotation, at klog's default verbosity, naming
// the cluster and Secret and neither token; a read that finds the same
// token logs nothing.
func TestRotationIsLoggedOnceAtDefaultVerbosity(t *testing.T) {
	const oldTok, newTok = "old-token-0123456789", "new-token-9876543210"
	srv := newAPIServer(t, oldTok)
	st := storeWithToken(oldTok)
	src, clk, logs := newSource(t, st, oldTok, nil)
	klogOut := &lockedBuffer{}
	// klog's own text format at -v=0, which is what the e2e suites read.
	src.log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(klogOut), textlogger.Verbosity(0))).
		WithValues("cluster", "member1", "secret", "karmada-cluster/member1")
	c := client(srv, src)

	// A periodic read that finds the same token: no line.
	step(clk, DefaultRefreshPeriod)
	get(t, c, srv.URL)
	waitFor(t, "the periodic read", func() bool { return st.calls.Load() == 1 && settled(src) })
	if got := strings.Join(klogOut.lines(), "\n"); strings.Contains(got, rotatedLine) {
		t.Fatalf("logged a rotation for a read that found the same token: %q", got)
	}

	// Rotated and revoked: the 401 replay picks the new token up; several
	// requests, one line.
	st.set(newTok)
	srv.accept(newTok)
	step(clk, MinForcedRefreshInterval)
	for range 3 {
		if code, _ := get(t, c, srv.URL); code != http.StatusOK {
			t.Fatalf("status %d after the rotation, want 200", code)
		}
	}
	var rotated []string
	for _, line := range klogOut.lines() {
		if strings.Contains(line, rotatedLine) {
			rotated = append(rotated, line)
		}
	}
	if len(rotated) != 1 {
		t.Fatalf("%d rotation lines, want 1: %q", len(rotated), klogOut.lines())
	}
	line := rotated[0]
	const want = `] "` + rotatedLine + `" cluster="member1" secret="karmada-cluster/member1"`
	if !strings.HasPrefix(line, "I") || !strings.HasSuffix(line, want) {
		t.Errorf("rotation line %q, want an info line (I...) ending in %q", line, want)
	}
	assertNoLeak(t, oldTok, klogOut.lines()...)
	assertNoLeak(t, newTok, klogOut.lines()...)
	assertNoLeak(t, newTok, logs.all()...)
}
