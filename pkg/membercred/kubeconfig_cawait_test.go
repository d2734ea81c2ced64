//go:build unix

package membercred

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// TestKubeconfigCAFailureWaitEndsWithTheDial: a handshake the followed CA
// does not verify waits for the re-read it starts, but not past the dial's
// context, as on the Secret and CA-file paths: when the context is
// cancelled or its deadline passes, the dial returns the verification
// error, as upstream's would, while the read stays stalled.
func TestKubeconfigCAFailureWaitEndsWithTheDial(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
	}{
		{"cancelled", func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel
		}},
		{"deadline", func() (context.Context, func()) { return newExpiringContext() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldCA, newCA := newTestCA(t, "old-ca", nil), newTestCA(t, "new-ca", nil)
			api := newKubeAPI(t, newCA.serving(t, leafOpts{}), nil)
			api.accept("tok")
			vol := newKubeconfigVolume(t, map[string][]byte{"config": kubeconfigFile{server: api.URL, token: "tok", ca: oldCA.pem()}.bytes(t)})
			k, cfg := followed(t, vol.path(), KubeconfigOptions{Clock: testingclock.NewFakePassiveClock(epoch)})
			// Only the dial's context can end the wait: the read bound is
			// out of reach and the read stays stalled until the test ends.
			k.readWait = time.Hour
			rt, err := rest.TransportFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr := innermostTransport(t, rt)
			if tr.DialTLSContext == nil {
				t.Fatal("the kubeconfig's transport does not dial through the followed CA")
			}
			u, err := url.Parse(api.URL)
			if err != nil {
				t.Fatal(err)
			}
			fifo := vol.stall(t, "config")

			ctx, end := tc.ctx()
			done := make(chan error, 1)
			go func() {
				conn, err := tr.DialTLSContext(ctx, "tcp", u.Host)
				if err == nil {
					conn.Close()
				}
				done <- err
			}()
			holdFIFOOpen(t, fifo) // the forced re-read the failure started
			end()
			select {
			case err := <-done:
				if !isVerificationError(err) {
					t.Fatalf("dial after its context ended: got %v, want the verification error", err)
				}
			case <-time.After(30 * time.Second): // a hang guard, far above any run
				t.Fatal("the dial still waits for the stalled kubeconfig read after its context ended")
			}
		})
	}
}

// expiringContext is a context whose deadline the test makes pass (a real
// one would pass on the wall clock, perhaps before the handshake).
type expiringContext struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newExpiringContext() (*expiringContext, func()) {
	c := &expiringContext{Context: context.Background(), done: make(chan struct{})}
	return c, func() { c.once.Do(func() { close(c.done) }) }
}

func (c *expiringContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *expiringContext) Done() <-chan struct{}       { return c.done }

func (c *expiringContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
