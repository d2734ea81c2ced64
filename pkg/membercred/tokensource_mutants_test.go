package membercred

import (
	"context"
	"testing"
	"time"
)

// TestUnauthorizedOfAReplacedTokenReadsNothing: a 401 of a token another
// request has already replaced is answered by the token now cached, with no
// read of the Secret, however long after the last read it comes.
func TestUnauthorizedOfAReplacedTokenReadsNothing(t *testing.T) {
	st := storeWithToken("new-token")
	src, clk, _ := newSource(t, st, "old-token", nil)
	sent := src.current.Load()
	read, answers := src.startUnauthorizedRead(sent)
	if read == alreadyDone || !answers {
		t.Fatalf("first 401 of the cached token: read %v answers %v, want a new read", read, answers)
	}
	<-read.done
	waitFor(t, "the read to settle", func() bool { return settled(src) })
	if cur := src.current.Load(); cur == nil || cur.token != "new-token" {
		t.Fatalf("after the read: %v, want new-token cached", cur)
	}
	step(clk, 10*MinForcedRefreshInterval+time.Second)
	calls := st.calls.Load()
	read, answers = src.startUnauthorizedRead(sent)
	if read != alreadyDone || !answers {
		t.Errorf("401 of the replaced token: read %v answers %v, want alreadyDone", read, answers)
	}
	waitFor(t, "any read to settle", func() bool { return settled(src) })
	if n := st.calls.Load() - calls; n != 0 {
		t.Errorf("401 of the replaced token read the Secret %d times, want 0", n)
	}
}

// TestExpiredReadOfAFreshTokenReadsNothing: a request that saw the cached
// token expire asks for a read; when another read has refreshed it
// meanwhile, the token is fresh and nothing is read.
func TestExpiredReadOfAFreshTokenReadsNothing(t *testing.T) {
	st := storeWithToken("cached-token-1")
	src, _, _ := newSource(t, st, "cached-token-1", nil)
	if read := src.startRead(readExpired); read != nil {
		t.Errorf("startRead(readExpired) with a fresh token = %v, want nil", read)
	}
	waitFor(t, "any read to settle", func() bool { return settled(src) })
	if n := st.calls.Load(); n != 0 {
		t.Errorf("the Secret was read %d times for a fresh token, want 0", n)
	}
}

// TestAdoptTheCachedTokenReadsNothing: a later caller that read the token
// already cached starts no read of the Secret.
func TestAdoptTheCachedTokenReadsNothing(t *testing.T) {
	st := storeWithToken("cached-token-1")
	src, _, _ := newSource(t, st, "cached-token-1", nil)
	src.adopt(st.get, "cached-token-1")
	waitFor(t, "any read to settle", func() bool { return settled(src) })
	if n := st.calls.Load(); n != 0 {
		t.Errorf("adopting the cached token read the Secret %d times, want 0", n)
	}
}

// TestFailedReadSaysWhetherATokenIsKept: a read that finds no usable token
// says the last good token stays in use when there is one, and that
// requests fail when there is none.
func TestFailedReadSaysWhetherATokenIsKept(t *testing.T) {
	const kept, failing = "keeping the last good token", "requests to the member fail until it is fixed"

	st := storeWithToken("")
	src, _, logs := newSource(t, st, "cached-token-1", nil)
	src.adopt(st.get, "other-token") // a token other than the cached one starts a read
	waitFor(t, "the read to settle", func() bool { return st.calls.Load() == 1 && settled(src) })
	if len(logs.containing(kept)) != 1 || len(logs.containing(failing)) != 0 {
		t.Errorf("with a cached token: logs %q, want one line saying %q", logs.all(), kept)
	}

	st = storeWithToken("")
	src, _, logs = newSource(t, st, "", nil)
	if _, err := src.token(context.Background()); err == nil {
		t.Fatal("token() with an empty Secret and nothing cached: no error")
	}
	if len(logs.containing(failing)) != 1 || len(logs.containing(kept)) != 0 {
		t.Errorf("with no token: logs %q, want one line saying %q", logs.all(), failing)
	}
}
