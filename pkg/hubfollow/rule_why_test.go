package hubfollow

import "testing"

// With a single answer and it a claim, the reason names no one who had no say.
func TestElectWhyOfALoneClaim(t *testing.T) {
	e := elect(testPair(t), []ProbeResult{claimed(connA.Name, "hub-a", connA.Endpoint, t1)})
	if want := "only " + connA.Name + " published a usable claim"; e.winner == nil || e.why != want {
		t.Errorf("why = %q (winner %v), want %q", e.why, e.winner != nil, want)
	}
}
