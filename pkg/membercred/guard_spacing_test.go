package membercred

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestGuardStrikeSpacing: 401s closer than guardStrikeSpacing to the last
// counted strike are that strike; one a full spacing later is the next.
// MinDuration is 1ns so that only the count decides.
func TestGuardStrikeSpacing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		gap         time.Duration // between the first two 401s
		wantStrikes int
		wantExits   int
	}{
		{"just under the spacing: one strike", guardStrikeSpacing - time.Millisecond, 1, 0},
		{"at the spacing: two strikes", guardStrikeSpacing, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t) // rejects everything
			f := newGuard(t, OwnCredentialGuardOptions{Threshold: 2, MinDuration: time.Nanosecond})
			hc := ownClient(t, srv, f.guard, staticToken)
			get(t, hc, srv.URL)
			step(f.clock, tc.gap)
			get(t, hc, srv.URL)
			if got := int(testutil.ToFloat64(f.m.ownPersisting)); got != tc.wantStrikes {
				t.Errorf("persisting_unauthorized = %d, want %d", got, tc.wantStrikes)
			}
			if got := len(f.exits.calls()); got != tc.wantExits {
				t.Errorf("exit called %d times, want %d", got, tc.wantExits)
			}
			if got := int(testutil.ToFloat64(f.m.ownUnauthorized)); got != 2 {
				t.Errorf("unauthorized_total = %d, want 2: every 401 is counted as seen", got)
			}
		})
	}
}
