package hubfollow

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// hubPair is the configured pair of hubs with each endpoint's canonical form.
// A claim can only select one of these; it never supplies an address or a
// credential itself.
type hubPair struct {
	conns [2]Connection
	canon [2]string
}

func newHubPair(primary, secondary Connection) (hubPair, error) {
	pair := hubPair{conns: [2]Connection{primary, secondary}}
	for i, c := range pair.conns {
		canon, err := normalizeEndpoint(c.Endpoint)
		if err != nil {
			return hubPair{}, fmt.Errorf("%s hub endpoint %q: %w", c.Name, redactEndpoint(c.Endpoint), err)
		}
		pair.canon[i] = canon
	}
	if pair.canon[0] == pair.canon[1] {
		return hubPair{}, fmt.Errorf("primary and secondary hub endpoints are the same hub (%s)", pair.canon[0])
	}
	return pair, nil
}

// match returns the configured connection a claimed endpoint names.
func (p hubPair) match(endpoint string) (Connection, string, bool) {
	canon, err := normalizeEndpoint(endpoint)
	if err != nil {
		return Connection{}, "", false
	}
	for i := range p.canon {
		if p.canon[i] == canon {
			return p.conns[i], canon, true
		}
	}
	return Connection{}, "", false
}

// hubKey identifies "the same hub" across polls: the Active's identity and
// the canonical endpoint it names. LastUpdated is deliberately not part of
// it: the Active republishes on a timer, and a key that changed with every
// republish would reset every confirmation.
type hubKey struct {
	identity string
	endpoint string // canonical
}

// candidate is a usable claim: published by a reachable hub, naming a
// configured hub.
type candidate struct {
	publisher string // slot that published the claim
	claim     Claim
	target    Connection // configured connection the claim names
	key       hubKey
}

// rejection is a claim naming an endpoint outside the configured pair.
type rejection struct {
	publisher string
	endpoint  string // redacted, for logs
}

// election is the rule's verdict on one poll.
type election struct {
	winner   *candidate // nil: nothing usable, change nothing
	rejected []rejection
	why      string
}

// elect applies the resolution rule to one poll of the hubs. In order:
//
//  1. an unreachable hub has no say, nor does one whose answer was not a
//     claim (published nothing, not found, rejected our credential,
//     malformed);
//  2. a claim naming an endpoint outside the configured pair is rejected: the
//     field selects among hubs an operator provisioned, it never points the
//     worker at an arbitrary address;
//  3. agreement (same identity and endpoint) wins; it is the normal case, as
//     the Standby mirrors the Active's declaration;
//  4. disagreement prefers the fresher lastUpdated (missing sorts oldest);
//     on a tie the lexically smaller identity, then the smaller endpoint, so
//     the answer during a split brain is single-valued and independent of
//     the order the hubs answered in;
//  5. nothing usable: no winner, which means change nothing.
func elect(pair hubPair, results []ProbeResult) election {
	var (
		e          election
		candidates []candidate
		noSay      []string
	)
	for _, r := range results {
		if r.Kind != ProbeClaim {
			noSay = append(noSay, r.Hub+": "+r.Kind.String())
			continue
		}
		target, canon, ok := pair.match(r.Claim.Endpoint)
		if !ok {
			e.rejected = append(e.rejected, rejection{publisher: r.Hub, endpoint: redactEndpoint(r.Claim.Endpoint)})
			noSay = append(noSay, r.Hub+": rejected_endpoint")
			continue
		}
		candidates = append(candidates, candidate{
			publisher: r.Hub,
			claim:     r.Claim,
			target:    target,
			key:       hubKey{identity: r.Claim.Identity, endpoint: canon},
		})
	}

	sort.Strings(noSay) // the log line should not depend on answer order either
	switch len(candidates) {
	case 0:
		e.why = "no hub published a usable claim (" + strings.Join(noSay, ", ") + ")"
		return e
	case 1:
		c := candidates[0]
		e.winner = &c
		e.why = "only " + c.publisher + " published a usable claim"
		if len(noSay) > 0 {
			e.why += " (" + strings.Join(noSay, ", ") + ")"
		}
		return e
	}

	best := candidates[0]
	agree := true
	for _, c := range candidates[1:] {
		if c.key != best.key {
			agree = false
		}
		if preferred(c, best) {
			best = c
		}
	}
	e.winner = &best
	if agree {
		e.why = "the hubs agree"
		return e
	}
	e.why = fmt.Sprintf("the hubs disagree; %s's claim wins: %s", best.publisher, whyPreferred(best, candidates))
	return e
}

// preferred reports whether a beats b when two usable claims disagree.
func preferred(a, b candidate) bool {
	if !a.claim.LastUpdated.Equal(b.claim.LastUpdated) {
		return a.claim.LastUpdated.After(b.claim.LastUpdated)
	}
	if a.key.identity != b.key.identity {
		return a.key.identity < b.key.identity
	}
	return a.key.endpoint < b.key.endpoint
}

// whyPreferred explains the tie-break that chose best, for the switch log.
func whyPreferred(best candidate, all []candidate) string {
	for _, c := range all {
		if c.key == best.key {
			continue
		}
		if !c.claim.LastUpdated.Equal(best.claim.LastUpdated) {
			return fmt.Sprintf("fresher lastUpdated (%s vs %s)", formatTime(best.claim.LastUpdated), formatTime(c.claim.LastUpdated))
		}
		if c.key.identity != best.key.identity {
			return fmt.Sprintf("equally fresh; identity %q sorts before %q", best.key.identity, c.key.identity)
		}
		return "equally fresh, same identity; endpoint sorts first"
	}
	return "identical claims"
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "missing"
	}
	return t.UTC().Format(time.RFC3339)
}
