package hubfollow

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	endpointA = "https://hub-a.example.com:6443"
	endpointB = "https://hub-b.example.com:6443"
)

var (
	connA = Connection{Name: PrimaryName, Endpoint: endpointA, TokenFile: "/a/token", CAFile: "/a/ca.crt"}
	connB = Connection{Name: SecondaryName, Endpoint: endpointB, TokenFile: "/b/token", CAFile: "/b/ca.crt"}
	t1    = time.Date(2026, 8, 25, 16, 40, 0, 0, time.UTC)
	t2    = t1.Add(2 * time.Minute)
)

func testPair(t *testing.T) hubPair {
	t.Helper()
	p, err := newHubPair(connA, connB)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Shorthands for one hub's answer in a poll.
func claimed(hub, identity, endpoint string, lastUpdated time.Time) ProbeResult {
	return ProbeResult{Hub: hub, Kind: ProbeClaim, Claim: Claim{Identity: identity, Endpoint: endpoint, LastUpdated: lastUpdated}}
}

func failed(hub string, kind ProbeKind) ProbeResult {
	return ProbeResult{Hub: hub, Kind: kind, Err: errors.New(kind.String())}
}

func nothing(hub string) ProbeResult { return ProbeResult{Hub: hub, Kind: ProbeNoClaim} }

func TestElect(t *testing.T) {
	tests := []struct {
		name         string
		results      []ProbeResult
		wantWinner   string // "" = change nothing; else "identity@slot"
		wantRejected []string
		wantWhy      string
	}{
		// An unreachable hub has no say.
		{name: "both unreachable", results: []ProbeResult{failed(PrimaryName, ProbeUnreachable), failed(SecondaryName, ProbeTimeout)},
			wantWhy: "no hub published a usable claim (primary: unreachable, secondary: timeout)"},
		{name: "one unreachable, the other claims", wantWinner: "hub-b@secondary",
			results: []ProbeResult{failed(PrimaryName, ProbeUnreachable), claimed(SecondaryName, "hub-b", endpointB, t1)},
			wantWhy: "only secondary published a usable claim (primary: unreachable)"},
		// A hub that published nothing has no say.
		{name: "non-HA: nothing published anywhere", results: []ProbeResult{nothing(PrimaryName), nothing(SecondaryName)},
			wantWhy: "primary: no_claim, secondary: no_claim"},
		{name: "one published, the other nothing", wantWinner: "hub-a@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), nothing(SecondaryName)}},
		// A hub rejecting our credential, missing the CR or serving garbage has no say.
		{name: "one hub answering 401", wantWinner: "hub-b@secondary",
			results: []ProbeResult{failed(PrimaryName, ProbeUnauthorized), claimed(SecondaryName, "hub-b", endpointB, t1)}},
		{name: "403, 404 and malformed have no say", wantWinner: "",
			results: []ProbeResult{failed(PrimaryName, ProbeForbidden), failed(SecondaryName, ProbeMalformed)}},
		{name: "not found has no say", wantWinner: "hub-a@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), failed(SecondaryName, ProbeNotFound)}},
		// A claim outside the configured pair is rejected.
		{name: "hostile claim outside the pair, alone", wantRejected: []string{"secondary"},
			results: []ProbeResult{failed(PrimaryName, ProbeUnreachable), claimed(SecondaryName, "evil", "https://evil.example.com:6443", t2)},
			wantWhy: "secondary: rejected_endpoint"},
		{name: "hostile fresher claim loses to a valid one", wantWinner: "hub-a@primary", wantRejected: []string{"secondary"},
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), claimed(SecondaryName, "evil", "https://evil.example.com:6443", t2)}},
		{name: "near-miss endpoints are outside the pair", wantRejected: []string{"primary", "secondary"},
			results: []ProbeResult{
				claimed(PrimaryName, "hub-b", "https://hub-b.example.com:6444", t1),
				claimed(SecondaryName, "hub-b", "http://hub-b.example.com:6443", t1),
			}},
		{name: "claim with userinfo is outside the pair", wantRejected: []string{"primary"},
			results: []ProbeResult{claimed(PrimaryName, "hub-b", "https://u:p@hub-b.example.com:6443", t1), nothing(SecondaryName)}},
		{name: "equivalent spelling of a configured endpoint is accepted", wantWinner: "hub-b@secondary",
			results: []ProbeResult{claimed(PrimaryName, "hub-b", "HTTPS://HUB-B.example.com:6443/", t1), nothing(SecondaryName)}},
		// Agreement wins, whatever the lastUpdated values.
		{name: "agreement", wantWinner: "hub-b@secondary", wantWhy: "the hubs agree",
			results: []ProbeResult{claimed(PrimaryName, "hub-b", endpointB, t1), claimed(SecondaryName, "hub-b", endpointB, t2)}},
		{name: "agreement on differently spelled endpoints", wantWinner: "hub-b@secondary", wantWhy: "the hubs agree",
			results: []ProbeResult{claimed(PrimaryName, "hub-b", endpointB, t1), claimed(SecondaryName, "hub-b", "https://HUB-B.example.com:6443/", t2)}},
		// Split brain: disagreement prefers the fresher claim.
		{name: "split brain, secondary fresher", wantWinner: "hub-b@secondary", wantWhy: "fresher lastUpdated",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), claimed(SecondaryName, "hub-b", endpointB, t2)}},
		{name: "split brain, primary fresher", wantWinner: "hub-a@primary", wantWhy: "fresher lastUpdated",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t2), claimed(SecondaryName, "hub-b", endpointB, t1)}},
		{name: "missing lastUpdated sorts oldest", wantWinner: "hub-a@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, t1), claimed(SecondaryName, "hub-b", endpointB, time.Time{})}},
		{name: "tie broken by identity", wantWinner: "hub-a@primary", wantWhy: `identity "hub-a" sorts before "hub-b"`,
			results: []ProbeResult{claimed(PrimaryName, "hub-b", endpointB, t1), claimed(SecondaryName, "hub-a", endpointA, t1)}},
		{name: "tie with both timestamps missing", wantWinner: "hub-a@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub-a", endpointA, time.Time{}), claimed(SecondaryName, "hub-b", endpointB, time.Time{})}},
		{name: "same identity, different endpoints: endpoint breaks the tie", wantWinner: "hub@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub", endpointB, t1), claimed(SecondaryName, "hub", endpointA, t1)}},
		{name: "same instant in different zones is a tie", wantWinner: "hub-a@primary",
			results: []ProbeResult{claimed(PrimaryName, "hub-b", endpointB, t1), claimed(SecondaryName, "hub-a", endpointA, t1.In(time.FixedZone("x", 3600)))}},
	}
	pair := testPair(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The verdict must not depend on which hub answered first.
			for _, results := range [][]ProbeResult{tt.results, reversed(tt.results)} {
				e := elect(pair, results)
				if got := describe(e.winner); got != tt.wantWinner {
					t.Errorf("winner = %q, want %q (why: %s)", got, tt.wantWinner, e.why)
				}
				var rejected []string
				for _, r := range e.rejected {
					rejected = append(rejected, r.publisher)
				}
				if strings.Join(slices.Sorted(slices.Values(rejected)), ",") != strings.Join(tt.wantRejected, ",") {
					t.Errorf("rejected = %v, want %v", rejected, tt.wantRejected)
				}
				if !strings.Contains(e.why, tt.wantWhy) {
					t.Errorf("why = %q, want it to contain %q", e.why, tt.wantWhy)
				}
			}
		})
	}
}

// The winner is always a configured connection with its own credential,
// never an address or credential taken from the claim.
func TestElectWinnerIsTheConfiguredConnection(t *testing.T) {
	e := elect(testPair(t), []ProbeResult{claimed(PrimaryName, "hub-b", "HTTPS://hub-b.example.com:6443/", t1)})
	if e.winner == nil || e.winner.target != connB {
		t.Fatalf("winner target = %+v, want the configured secondary %+v", e.winner, connB)
	}
}

func TestElectRedactsRejectedEndpoints(t *testing.T) {
	e := elect(testPair(t), []ProbeResult{claimed(PrimaryName, "x", "https://admin:s3cret@evil.example.com", t1)})
	if len(e.rejected) != 1 || strings.Contains(e.rejected[0].endpoint, "s3cret") {
		t.Errorf("rejected = %+v; want one, without the password", e.rejected)
	}
}

func describe(c *candidate) string {
	if c == nil {
		return ""
	}
	return c.claim.Identity + "@" + c.target.Name
}

func reversed(in []ProbeResult) []ProbeResult {
	out := make([]ProbeResult, len(in))
	for i, r := range in {
		out[len(in)-1-i] = r
	}
	return out
}

func TestNewHubPairRefusesOneAddressSpelledTwice(t *testing.T) {
	for _, tt := range []struct{ primary, secondary string }{
		{"https://[::1]:6443", "https://[0:0:0:0:0:0:0:1]:6443"},
		{"https://[2001:db8::1]", "https://[2001:DB8:0:0::1]:443/"},
		{"https://127.0.0.1:6443", "https://[::ffff:127.0.0.1]:6443"},
	} {
		a, b := connA, connB
		a.Endpoint, b.Endpoint = tt.primary, tt.secondary
		if _, err := newHubPair(a, b); err == nil || !strings.Contains(err.Error(), "same hub") {
			t.Errorf("newHubPair(%q, %q): err = %v, want the same hub", tt.primary, tt.secondary, err)
		}
	}
}

// A claim spelling a configured IPv6 endpoint differently names that hub, and
// two spellings across polls are one hub for the confirmation streak.
func TestClaimSpellingAConfiguredIPv6EndpointMatches(t *testing.T) {
	a, b := connA, connB
	a.Endpoint, b.Endpoint = "https://[2001:db8::a]:6443", "https://[2001:db8::b]:6443"
	pair, err := newHubPair(a, b)
	if err != nil {
		t.Fatal(err)
	}
	spellings := []string{"https://[2001:DB8:0:0:0:0:0:B]:6443", "https://[2001:db8::b]:6443/", "[2001:db8:0::b]:6443"}
	for _, s := range spellings {
		got, _, ok := pair.match(s)
		if !ok || got != b {
			t.Errorf("match(%q) = %v, %v; want the secondary", s, got.Name, ok)
		}
	}
	r := newResolver(pair, len(spellings))
	r.startup([]ProbeResult{claimed(PrimaryName, "hub-a", a.Endpoint, t1), claimed(SecondaryName, "hub-a", a.Endpoint, t1)})
	var last step
	for _, s := range spellings {
		last = r.observe([]ProbeResult{claimed(PrimaryName, "hub-b", s, t1), claimed(SecondaryName, "hub-b", s, t1)})
	}
	if last.switchTo == nil || *last.switchTo != b {
		t.Errorf("after %d polls naming hub-b in different spellings: switchTo = %v, streak %d; want the secondary", len(spellings), last.switchTo, last.streak)
	}
}
