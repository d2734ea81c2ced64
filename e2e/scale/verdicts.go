package scale

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// recoveryMargin is what issue 24 allows on top of one status period:
// "every member recovered within one status period + 2 s".
const recoveryMargin = 2 * time.Second

// relistSlack is how many more member lists than the control (a restart
// with nothing rotated) the patched on-time storm may show before the
// relist verdict's detail points the excess out: the two windows differ in
// length and in where the reflectors' backoff falls. The verdict itself is
// the lists' causes (Requests.ListsByCause).
const relistSlack = 0.10

// rssSlack is issue 24's "within 5 % of pristine at steady state".
const rssSlack = 0.05

// Judge evaluates issue 24's targets on the runs r holds, at the largest
// K measured for the targets issue 24 states at K = 100 (the detail says
// which K that was).
func (r *Report) Judge() {
	r.Verdicts = nil
	if len(r.Ks) == 0 {
		return
	}
	top := slices.Max(r.Ks)
	at := fmt.Sprintf("K = %d", top)
	if top != 100 {
		at += " (the issue asks K = 100; the largest measured here)"
	}
	add := func(target string, met bool, format string, args ...any) {
		r.Verdicts = append(r.Verdicts, Verdict{Target: target, Met: met, Detail: fmt.Sprintf(format, args...)})
	}

	bound := r.StatusPeriod + recoveryMargin
	if p, ok := r.Find(top, OnTime, Patched); ok {
		add("patched: p99 recovery ≤ one status period + 2 s", p.Recovery.P99 <= bound && p.Recovery.Recovered == p.Recovery.Members,
			"%s, on-time storm: p99 %s against %s (%d/%d recovered)", at, FormatDuration(p.Recovery.P99), FormatDuration(bound), p.Recovery.Recovered, p.Recovery.Members)
		cm, served := p.credentials(ControllerManager)
		add("patched: exactly one Secret read per member per rotation", served && cm.Served && cm.MembersOnePerRotation == p.K,
			"%s, on-time storm, controller-manager's membercred refreshes per member: %s (%d of %d members read once; %d more read again when their periodic re-read fell due in the window, of %d due)",
			at, cm.reads(), cm.MembersRead1, p.K, cm.MembersOnePerRotation-cm.MembersRead1, cm.PeriodicDue)
		r.judgeRelists(add, at, p)
	} else {
		add("patched: p99 recovery ≤ one status period + 2 s", false, "%s: no patched on-time run", at)
	}

	var persisted float64
	var persistedWhere []string
	var latePersisted float64
	for _, run := range r.Runs {
		if run.Variant != Patched {
			continue
		}
		if run.Storm == LateSecret {
			// While a Secret still holds the revoked token there is no
			// good one to read: those 401s persist by construction.
			for _, c := range run.Credentials {
				latePersisted += c.Persisted
			}
			continue
		}
		for _, c := range run.Credentials {
			if c.Persisted > 0 {
				persisted += c.Persisted
				persistedWhere = append(persistedWhere, fmt.Sprintf("K=%d %s %s: %g", run.K, run.Storm, c.Component, c.Persisted))
			}
		}
	}
	detail := "on-time and control storms, every K, every component"
	if len(persistedWhere) > 0 {
		detail = strings.Join(persistedWhere, "; ")
	}
	add("patched: 0 persisted 401s", persisted == 0, "%s; the late-secret storm's %g are the requests made while a Secret still held the revoked token (no good token to read), counted apart", detail, latePersisted)

	pr, ok1 := r.plane(top, Pristine)
	pa, ok2 := r.plane(top, Patched)
	switch {
	case ok1 && ok2 && pr.SteadyHeap > 0 && pa.SteadyHeap > 0:
		// The live heap decides (Plane.SteadyHeap); RSS is shown.
		diff := float64(pa.SteadyHeap-pr.SteadyHeap) / float64(pr.SteadyHeap)
		add("patched: controller-manager steady-state RSS within 5 % of pristine", diff <= rssSlack,
			"%s, live heap after a forced GC: patched %s, pristine %s (%+.1f%%, %+.1f KiB per member); RSS %s vs %s (%+.1f%%)", at,
			mib(pa.SteadyHeap), mib(pr.SteadyHeap), diff*100, float64(pa.SteadyHeap-pr.SteadyHeap)/1024/float64(top),
			mib(pa.SteadyRSS), mib(pr.SteadyRSS), float64(pa.SteadyRSS-pr.SteadyRSS)/float64(max(pr.SteadyRSS, 1))*100)
	case ok1 && ok2 && pr.SteadyRSS > 0:
		diff := float64(pa.SteadyRSS-pr.SteadyRSS) / float64(pr.SteadyRSS)
		add("patched: controller-manager steady-state RSS within 5 % of pristine", diff <= rssSlack,
			"%s: patched %s, pristine %s (%+.1f%%, %+.1f KiB per member)", at, mib(pa.SteadyRSS), mib(pr.SteadyRSS), diff*100, float64(pa.SteadyRSS-pr.SteadyRSS)/1024/float64(top))
	}

	for _, s := range []Storm{OnTime, LateSecret} {
		var faster, fewer []string
		metT, metR := true, true
		for _, k := range r.Ks {
			p, ok1 := r.Find(k, s, Patched)
			w, ok2 := r.Find(k, s, Restart)
			if !ok1 || !ok2 {
				continue
			}
			metT = metT && p.Recovery.P99 < w.Recovery.P99
			// Judged less the metrics adapter's discovery fan-out
			// (Requests.DiscoveryFanOut), steady traffic that is not the
			// recovery's; both figures are shown.
			pr, wr := p.Members.Recovery(), w.Members.Recovery()
			metR = metR && pr < wr
			faster = append(faster, fmt.Sprintf("K=%d: %s vs %s (%s)", k, FormatDuration(p.Recovery.P99), FormatDuration(w.Recovery.P99), ratio(p.Recovery.P99, w.Recovery.P99)))
			fewer = append(fewer, fmt.Sprintf("K=%d: %d vs %d (%s; with the discovery fan-out %d vs %d, %s)", k, pr, wr, countRatio(pr, wr),
				p.Members.Total, w.Members.Total, countRatio(p.Members.Total, w.Members.Total)))
		}
		if len(faster) == 0 {
			continue
		}
		add(fmt.Sprintf("patched beats pristine+restart on p99 recovery (%s)", s), metT, "%s", strings.Join(faster, "; "))
		add(fmt.Sprintf("patched beats pristine+restart on member requests (%s)", s), metR, "less karmada-metrics-adapter's discovery fan-out: %s", strings.Join(fewer, "; "))
	}

	var curve []CurvePoint
	for _, k := range r.Ks {
		if p, ok := r.Find(k, OnTime, Patched); ok {
			curve = append(curve, CurvePoint{K: k, P99: p.Recovery.P99})
		}
	}
	linear, why := GrowsLinearly(curve)
	add("patched: recovery time grows no worse than linearly in K", linear, "%s", why)
}

// judgeRelists judges "no relist caused by the credential change" on the
// patched on-time storm p: no member list after a 401 that reached its
// caller (CauseAfter401). The control storm's list count is shown beside
// it. Lists whose causes were not read (no classification, no member
// audit events, causes for fewer lists than counted) are not judged, and
// not met: missing evidence is not a pass.
func (r *Report) judgeRelists(add func(string, bool, string, ...any), at string, p Run) {
	const target = "patched: no relist caused by the credential change"
	control := "no control run (members restarted with nothing rotated) to compare with"
	if c, ok := r.Find(p.K, Control, Patched); ok {
		control = fmt.Sprintf("control (members restarted, nothing rotated): %d lists against %d", c.Members.Lists, p.Members.Lists)
		if limit := float64(c.Members.Lists) * (1 + relistSlack); float64(p.Members.Lists) > limit {
			control += fmt.Sprintf(", %+.0f%%: above the +%.0f%% allowed for the windows' difference, see the causes", countRatioF(p.Members.Lists, c.Members.Lists), relistSlack*100)
		}
	}
	m := p.Members
	classified := 0
	for _, n := range m.ListsByCause {
		classified += n
	}
	var missing string
	switch {
	case m.ListsByCause == nil:
		missing = "the member lists were counted but not classified by cause (a report from before the classification)"
	case m.Total == 0:
		missing = "no member audit events in the window (no audit log read)"
	case classified != m.Lists:
		missing = fmt.Sprintf("causes for %d of %d member lists only", classified, m.Lists)
	}
	if missing != "" {
		add(target, false, "%s, on-time storm: not judged: %s; %s", at, missing, control)
		return
	}
	after := m.ListsByCause[CauseAfter401]
	detail := fmt.Sprintf("%s, on-time storm: %d of %d member lists after a 401 that reached its caller", at, after, m.Lists)
	if after > 0 {
		detail += " (" + verbs(m.ListCauses[CauseAfter401]) + ")"
	}
	add(target, after == 0, "%s; by cause: %s; %s", detail, verbs(m.ListsByCause), control)
}

func countRatioF(p, c int) float64 {
	if c == 0 {
		return 100
	}
	return float64(p-c) / float64(c) * 100
}

func ratio(p, w time.Duration) string {
	if w == NotRecovered {
		return "restart never recovered"
	}
	if p == NotRecovered {
		return "patched never recovered"
	}
	if p == 0 {
		return "patched instant"
	}
	if p > w {
		return fmt.Sprintf("patched %.1f× slower, %s more", float64(p)/float64(w), FormatDuration(p-w))
	}
	return fmt.Sprintf("%.1f× faster, %s less", float64(w)/float64(p), FormatDuration(w-p))
}

func countRatio(p, w int) string {
	if w == 0 {
		return "restart sent none"
	}
	return fmt.Sprintf("%+.0f%%", float64(p-w)/float64(w)*100)
}

// RecoveryQuantum is how often the harness looks for recovery: every
// recovery time is late by up to this much.
const RecoveryQuantum = 500 * time.Millisecond

// CurvePoint is the patched on-time p99 recovery at one fleet size.
type CurvePoint struct {
	K   int
	P99 time.Duration
}

// GrowsLinearly judges "recovery time grows no worse than linearly in K"
// on the curve's slope, and says why. Recovery has a fixed part (one
// member takes a second or two), so proportion from the smallest K would
// allow growth far steeper than linear; instead the time each further
// member adds (a segment's slope, between successive sizes) may not grow
// from the first segment to any later one by more than the polls'
// quantisation: RecoveryQuantum at each end of both segments. With only two
// sizes there is a single segment, and the larger may take at most the
// smaller's p99 (plus a poll) in proportion to K.
func GrowsLinearly(points []CurvePoint) (bool, string) {
	pts := slices.Clone(points)
	slices.SortFunc(pts, func(a, b CurvePoint) int { return cmp.Compare(a.K, b.K) })
	var curve []string
	for _, p := range pts {
		curve = append(curve, fmt.Sprintf("K=%d %s", p.K, FormatDuration(p.P99)))
	}
	head := "on-time p99: " + strings.Join(curve, ", ")
	switch {
	case len(pts) < 2:
		return false, head + ": one fleet size, no curve"
	case slices.ContainsFunc(pts, func(p CurvePoint) bool { return p.P99 == NotRecovered }):
		return false, head + ": not every size recovered"
	}
	q := RecoveryQuantum.Seconds()
	if len(pts) == 2 {
		a, b := pts[0], pts[1]
		allowed := (a.P99.Seconds() + q) * float64(b.K) / float64(a.K)
		return b.P99.Seconds() <= allowed, fmt.Sprintf("%s: two sizes, judged against proportion from the smaller: at most %s at K=%d", head, formatSeconds(allowed), b.K)
	}
	slope := func(a, b CurvePoint) float64 { return (b.P99.Seconds() - a.P99.Seconds()) / float64(b.K-a.K) }
	first := slope(pts[0], pts[1])
	firstSpan := float64(pts[1].K - pts[0].K)
	ms := func(s float64) string { return fmt.Sprintf("%.0f ms", s*1000) }
	met := true
	segments := []string{fmt.Sprintf("K=%d→%d: %s", pts[0].K, pts[1].K, ms(first))}
	for i := 2; i < len(pts); i++ {
		span := float64(pts[i].K - pts[i-1].K)
		s := slope(pts[i-1], pts[i])
		allowed := max(first, 0) + 2*q/firstSpan + 2*q/span
		if s > allowed {
			met = false
		}
		segments = append(segments, fmt.Sprintf("K=%d→%d: %s (allowed %s)", pts[i-1].K, pts[i].K, ms(s), ms(allowed)))
	}
	// Steepest last: the reader sees first what decided it.
	slices.Reverse(segments)
	return met, fmt.Sprintf("%s; time each further member adds: %s", head, strings.Join(segments, ", "))
}
