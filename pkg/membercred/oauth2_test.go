package membercred

import (
	"testing"
	"time"

	"golang.org/x/oauth2"
	testingclock "k8s.io/utils/clock/testing"
)

// countingTokenSource counts how often a wrapping cache asks its source.
type countingTokenSource struct {
	src   oauth2.TokenSource
	calls int
}

func (c *countingTokenSource) Token() (*oauth2.Token, error) {
	c.calls++
	return c.src.Token()
}

// TestReuseTokenSourcePicksUpARotation: oauth2's own cache over a
// SecretTokenSource (what oauth2.NewClient builds) must ask the source
// again once the Secret is due for a read, and so serve a rotated token;
// with a zero Expiry it kept the first token forever. oauth2 compares
// Expiry with the real time, so each source's fake clock is set against
// the real time: one read the token just now, the other a period ago.
func TestReuseTokenSourcePicksUpARotation(t *testing.T) {
	newAt := func(t *testing.T, st *secretStore, at time.Time) (*SecretTokenSource, *testingclock.FakePassiveClock, *logLines) {
		t.Helper()
		clk, logs := testingclock.NewFakePassiveClock(at), &logLines{}
		src, err := NewSecretTokenSource(SecretTokenSourceOptions{
			Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
			Getter: st.get, InitialToken: "old", Logger: logs.logger(), Clock: clk,
		})
		if err != nil {
			t.Fatal(err)
		}
		return src, clk, logs
	}

	t.Run("a fresh token is cached", func(t *testing.T) {
		st := storeWithToken("old")
		src, clk, _ := newAt(t, st, time.Now())
		counted := &countingTokenSource{src: src}
		reuse := oauth2.ReuseTokenSource(nil, counted)
		tok, err := reuse.Token()
		if err != nil || tok.AccessToken != "old" {
			t.Fatalf("Token() = %v, %v; want old", tok, err)
		}
		if want := clk.Now().Add(DefaultRefreshPeriod); !tok.Expiry.Equal(want) {
			t.Errorf("Expiry %s, want the next read due at %s", tok.Expiry, want)
		}
		st.set("new")
		if tok, _ := reuse.Token(); tok.AccessToken != "old" || counted.calls != 1 {
			t.Errorf("within the period: %q after %d calls to the source, want old from oauth2's cache after 1", tok.AccessToken, counted.calls)
		}
	})

	t.Run("a token due for a read is asked for again", func(t *testing.T) {
		st := storeWithToken("old")
		src, clk, logs := newAt(t, st, time.Now().Add(-DefaultRefreshPeriod))
		counted := &countingTokenSource{src: src}
		reuse := oauth2.ReuseTokenSource(nil, counted)
		if tok, err := reuse.Token(); err != nil || tok.AccessToken != "old" {
			t.Fatalf("Token() = %v, %v; want old", tok, err)
		}
		st.set("new")
		clk.SetTime(clk.Now().Add(DefaultRefreshPeriod)) // the period is up
		if tok, _ := reuse.Token(); tok.AccessToken != "old" {
			t.Fatalf("at the refresh: %q, want old while the Secret is read", tok.AccessToken)
		}
		if counted.calls != 2 {
			t.Fatalf("oauth2.ReuseTokenSource asked the source %d times, want 2: a token due for a read must not stay cached", counted.calls)
		}
		waitFor(t, "the background read", func() bool { return st.calls.Load() == 1 && settled(src) })
		tok, err := reuse.Token()
		if err != nil || tok.AccessToken != "new" {
			t.Fatalf("after the Secret was rotated and read: %v, %v; want new through oauth2.ReuseTokenSource", tok, err)
		}
		if want := clk.Now().Add(DefaultRefreshPeriod); !tok.Expiry.Equal(want) {
			t.Errorf("Expiry %s, want the next read due at %s", tok.Expiry, want)
		}
		assertNoLeak(t, "new", logs.all()...)
	})
}
