package hubfollow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// claimStateExposition is kubeslice_worker_hub_claim_state with state set to
// 1 and every other state 0.
func claimStateExposition(state string) string {
	var b strings.Builder
	b.WriteString(`# HELP kubeslice_worker_hub_claim_state ` + claimStateHelp + "\n")
	b.WriteString("# TYPE kubeslice_worker_hub_claim_state gauge\n")
	for _, s := range []string{"claim", "no_answer", "no_claim", "rejected"} { // exposition order
		v := 0
		if s == state {
			v = 1
		}
		fmt.Fprintf(&b, "kubeslice_worker_hub_claim_state{state=%q} %d\n", s, v)
	}
	return b.String()
}

// TestClaimStateSaysWhenNoHubPublishes: a worker whose hubs run a released
// KubeSlice controller (no status.activeController) reads no_claim from
// every hub forever and can never switch; the gauge says so after every
// round, startup included, so an alert can.
func TestClaimStateSaysWhenNoHubPublishes(t *testing.T) {
	sf := newScriptedFollower(t, testConfig(), "0")
	if err := testutil.GatherAndCompare(sf.registry, strings.NewReader(claimStateExposition("no_claim")), metricClaimState); err != nil {
		t.Errorf("after a startup round in which no hub published a claim: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := sf.run(ctx)
	for _, step := range []struct{ poll, want string }{
		{"A", "claim"},
		{"-", "no_answer"},
		{"evil", "rejected"},
		{"401", "no_answer"},
		{"0", "no_claim"},
	} {
		sf.tick(step.poll)
		waitFor(t, "the round to be recorded", func() bool {
			return testutil.GatherAndCompare(sf.registry, strings.NewReader(claimStateExposition(step.want)), metricClaimState) == nil
		})
	}
	cancel()
	if err := waitDone(t, "Run", done); err != nil {
		t.Fatal(err)
	}
}

// TestClaimStateBeforeAnyRound: every state exists at 0 once the metrics
// are registered, so an alert's expression has its series from the start.
func TestClaimStateBeforeAnyRound(t *testing.T) {
	m, err := newMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(m.claimState, strings.NewReader(claimStateExposition(""))); err != nil {
		t.Error(err)
	}
}
