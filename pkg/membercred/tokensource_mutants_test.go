package membercred

import (
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
	st := storeWithToken("tok")
	src, _, _ := newSource(t, st, "tok", nil)
	if read := src.startRead(readExpired); read != nil {
		t.Errorf("startRead(readExpired) with a fresh token = %v, want nil", read)
	}
	waitFor(t, "any read to settle", func() bool { return settled(src) })
	if n := st.calls.Load(); n != 0 {
		t.Errorf("the Secret was read %d times for a fresh token, want 0", n)
	}
}
