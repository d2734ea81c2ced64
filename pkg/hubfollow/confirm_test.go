package hubfollow

import (
	"testing"
	"time"
)

// poll builds one poll of both hubs from a symbol:
//
//	"A", "B"  both hubs agree that hub-a / hub-b leads (lastUpdated t1)
//	"B+"      as "B" but republished later (lastUpdated t1+1m)
//	"B++"     as "B" republished again (t1+2m)
//	"B2"      hub-b's endpoint under a new identity "hub-b2"
//	"A2"      hub-a's endpoint under a new identity "hub-a2"
//	"split"   primary says hub-a (t1), secondary says hub-b (fresher, t2)
//	"evil"    primary unreachable, secondary claims an endpoint outside the pair
//	"-"       both unreachable
//	"0"       both published nothing
//	"401"     primary rejects the credential, secondary unreachable
func poll(t *testing.T, symbol string) []ProbeResult {
	t.Helper()
	both := func(identity, endpoint string, at time.Time) []ProbeResult {
		return []ProbeResult{claimed(PrimaryName, identity, endpoint, at), claimed(SecondaryName, identity, endpoint, at)}
	}
	switch symbol {
	case "A":
		return both("hub-a", endpointA, t1)
	case "A2":
		return both("hub-a2", endpointA, t1)
	case "B":
		return both("hub-b", endpointB, t1)
	case "B+":
		return both("hub-b", endpointB, t1.Add(time.Minute))
	case "B++":
		return both("hub-b", endpointB, t1.Add(2*time.Minute))
	case "B2":
		return both("hub-b2", endpointB, t1)
	case "split":
		return []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), claimed(SecondaryName, "hub-b", endpointB, t2)}
	case "evil":
		return []ProbeResult{failed(PrimaryName, ProbeUnreachable), claimed(SecondaryName, "evil", "https://evil.example.com:6443", t2)}
	case "-":
		return []ProbeResult{failed(PrimaryName, ProbeUnreachable), failed(SecondaryName, ProbeUnreachable)}
	case "0":
		return []ProbeResult{nothing(PrimaryName), nothing(SecondaryName)}
	case "401":
		return []ProbeResult{failed(PrimaryName, ProbeUnauthorized), failed(SecondaryName, ProbeUnreachable)}
	}
	t.Fatalf("unknown poll symbol %q", symbol)
	return nil
}

func TestStartupTakesTheFirstWinnerAsItStands(t *testing.T) {
	tests := []struct {
		name, startup string
		want          Connection
	}{
		{name: "secondary declared active", startup: "B", want: connB},
		{name: "primary declared active", startup: "A", want: connA},
		{name: "split brain: the fresher claim", startup: "split", want: connB},
		{name: "nothing published: the primary, as a non-HA worker", startup: "0", want: connA},
		{name: "both unreachable: the primary", startup: "-", want: connA},
		{name: "only a hostile claim: the primary", startup: "evil", want: connA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// confirmations=2: upstream's bug demanded them here and so never
			// left the primary.
			r := newResolver(testPair(t), 2)
			got, _ := r.startup(poll(t, tt.startup))
			if got != tt.want {
				t.Errorf("startup chose %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestChangeNeedsConsecutiveConfirmations(t *testing.T) {
	tests := []struct {
		name          string
		confirmations int
		startup       string
		polls         []string
		wantSwitchAt  int // index into polls; -1 = never
		wantTarget    Connection
	}{
		{name: "two agreeing polls move the worker", confirmations: 2, startup: "A", polls: []string{"B", "B"}, wantSwitchAt: 1, wantTarget: connB},
		{name: "one confirmation moves at once", confirmations: 1, startup: "A", polls: []string{"B"}, wantSwitchAt: 0, wantTarget: connB},
		{name: "three confirmations", confirmations: 3, startup: "A", polls: []string{"B", "B", "B"}, wantSwitchAt: 2, wantTarget: connB},
		{name: "back to the primary", confirmations: 2, startup: "B", polls: []string{"A", "A"}, wantSwitchAt: 1, wantTarget: connA},
		{name: "from the primary fallback once a claim appears", confirmations: 2, startup: "0", polls: []string{"B", "B"}, wantSwitchAt: 1, wantTarget: connB},
		{name: "split brain confirms like agreement", confirmations: 2, startup: "A", polls: []string{"split", "split"}, wantSwitchAt: 1, wantTarget: connB},

		{name: "flapping A,B,A,B never switches", confirmations: 2, startup: "A",
			polls: []string{"B", "A", "B", "A", "B", "A", "B"}, wantSwitchAt: -1},
		{name: "a steady claim for the connected hub never switches", confirmations: 2, startup: "A",
			polls: []string{"A", "A", "A"}, wantSwitchAt: -1},
		{name: "a new identity on the connected endpoint is not a change", confirmations: 2, startup: "A",
			polls: []string{"A2", "A2", "A2"}, wantSwitchAt: -1},
		{name: "a claim for the primary after the fallback is not a change", confirmations: 2, startup: "0",
			polls: []string{"A", "A", "A"}, wantSwitchAt: -1},

		// lastUpdated is republished on a timer: it neither resets nor
		// completes a confirmation.
		{name: "republished lastUpdated does not reset the streak", confirmations: 3, startup: "A",
			polls: []string{"B", "B+", "B++"}, wantSwitchAt: 2, wantTarget: connB},
		{name: "republished lastUpdated does not complete the streak early", confirmations: 3, startup: "A",
			polls: []string{"B", "B+"}, wantSwitchAt: -1},
		{name: "a new identity restarts the streak", confirmations: 2, startup: "A",
			polls: []string{"B", "B2", "B2"}, wantSwitchAt: 2, wantTarget: connB},

		// A poll with no usable answer resets: consecutive means consecutive.
		{name: "an unreachable poll resets the streak", confirmations: 2, startup: "A",
			polls: []string{"B", "-", "B"}, wantSwitchAt: -1},
		{name: "and the streak starts over after it", confirmations: 2, startup: "A",
			polls: []string{"B", "-", "B", "B"}, wantSwitchAt: 3, wantTarget: connB},
		{name: "a poll with nothing published resets the streak", confirmations: 2, startup: "A",
			polls: []string{"B", "0", "B"}, wantSwitchAt: -1},
		{name: "a poll saying stay resets the streak", confirmations: 3, startup: "A",
			polls: []string{"B", "B", "A", "B", "B"}, wantSwitchAt: -1},

		// Uncertainty never moves a worker, however long it lasts.
		{name: "hubs unreachable for a long time", confirmations: 2, startup: "A",
			polls: []string{"-", "-", "-", "-", "-"}, wantSwitchAt: -1},
		{name: "credential rejected", confirmations: 2, startup: "A",
			polls: []string{"401", "401", "401"}, wantSwitchAt: -1},
		{name: "a hostile claim outside the pair, repeated", confirmations: 2, startup: "A",
			polls: []string{"evil", "evil", "evil"}, wantSwitchAt: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResolver(testPair(t), tt.confirmations)
			r.startup(poll(t, tt.startup))
			switchedAt := -1
			for i, sym := range tt.polls {
				s := r.observe(poll(t, sym))
				if s.switchTo == nil {
					continue
				}
				if switchedAt != -1 {
					t.Fatalf("switched twice: at poll %d and %d", switchedAt, i)
				}
				switchedAt = i
				if *s.switchTo != tt.wantTarget {
					t.Errorf("switched to %+v, want %+v", *s.switchTo, tt.wantTarget)
				}
			}
			if switchedAt != tt.wantSwitchAt {
				t.Errorf("switched at poll %d, want %d (polls %v)", switchedAt, tt.wantSwitchAt, tt.polls)
			}
		})
	}
}

func TestObserveReportsTheStreak(t *testing.T) {
	r := newResolver(testPair(t), 3)
	r.startup(poll(t, "A"))
	if s := r.observe(poll(t, "B")); s.streak != 1 || s.abandoned != nil {
		t.Errorf("first sighting: streak %d abandoned %+v", s.streak, s.abandoned)
	}
	if s := r.observe(poll(t, "B+")); s.streak != 2 {
		t.Errorf("second sighting: streak %d", s.streak)
	}
	s := r.observe(poll(t, "-"))
	if s.streak != 0 || s.abandoned == nil || s.abandoned.streak != 2 || s.abandoned.key.identity != "hub-b" {
		t.Errorf("after an unusable poll: streak %d abandoned %+v; want the 2-poll streak for hub-b reported", s.streak, s.abandoned)
	}
	if s := r.observe(poll(t, "-")); s.abandoned != nil {
		t.Errorf("abandoned reported twice: %+v", s.abandoned)
	}
}
