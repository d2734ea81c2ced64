package hubfollow

// resolver turns the rule's per-poll verdicts into hub decisions: the first
// one at startup, then at most one confirmed change. It is pure state, no I/O.
type resolver struct {
	pair          hubPair
	confirmations int

	// connected is the hub in use. Its identity is empty when startup found
	// no usable claim and fell back to the primary.
	connected hubKey
	// pending is a different hub recent polls have named, seen streak
	// consecutive times.
	pending hubKey
	streak  int
}

func newResolver(pair hubPair, confirmations int) *resolver {
	return &resolver{pair: pair, confirmations: confirmations}
}

// startup decides the hub to connect to when nothing is connected yet. The
// first winner is taken as it stands: the confirmation threshold guards a
// CHANGE of hub, and before anything is connected there is nothing to protect
// and nothing to flap between. (Upstream first demanded confirmations here; a
// single startup call can never reach the threshold, so the worker always
// fell back to the primary, including when the primary had just lost
// leadership, the one case startup resolution exists for.) With no usable
// claim the answer is the primary, exactly what a non-HA worker uses.
func (r *resolver) startup(results []ProbeResult) (Connection, election) {
	e := elect(r.pair, results)
	if e.winner == nil {
		r.connected = hubKey{endpoint: r.pair.canon[0]}
		return r.pair.conns[0], e
	}
	r.connected = e.winner.key
	return e.winner.target, e
}

// step is the outcome of one poll once the worker is connected.
type step struct {
	election
	// switchTo is set when a change of hub is confirmed.
	switchTo *Connection
	// streak counts consecutive polls naming the pending hub (0: none).
	streak int
	// abandoned is set when a pending change lost its streak this poll.
	abandoned *candidateStreak
}

type candidateStreak struct {
	key    hubKey
	streak int
}

// observe feeds one poll. A change needs r.confirmations consecutive polls
// whose winner names the same new hub, compared on identity and endpoint
// only. A poll that names the connected hub ("stay") or has no usable answer
// resets the streak: consecutive means consecutive, so a change is only made
// on evidence that held without interruption. The cost is a slower move when
// a hub blips during a real failover (one more interval per blip); the
// benefit is that a hub flapping between answers can never move a worker.
//
// The winner's endpoint decides stay versus change. A new identity at the
// connected endpoint is not a change: restarting would reconnect to the same
// place.
func (r *resolver) observe(results []ProbeResult) step {
	s := step{election: elect(r.pair, results)}
	w := s.winner
	if w == nil || w.key.endpoint == r.connected.endpoint {
		s.abandoned = r.reset()
		return s
	}
	if w.key != r.pending || r.streak == 0 {
		s.abandoned = r.reset()
		r.pending = w.key
	}
	r.streak++
	s.streak = r.streak
	if r.streak >= r.confirmations {
		target := w.target
		s.switchTo = &target
		r.connected = w.key
		r.pending, r.streak = hubKey{}, 0
	}
	return s
}

// reset drops any pending change and reports it if there was one.
func (r *resolver) reset() *candidateStreak {
	if r.streak == 0 {
		return nil
	}
	lost := &candidateStreak{key: r.pending, streak: r.streak}
	r.pending, r.streak = hubKey{}, 0
	return lost
}
