package karmadacp

import "errors"

// errBlindWindow marks a pristine observation that ended as the window
// allows: a member client refused (401) with the object in place, then
// blindSettle without it being seen.
type errBlindWindow struct{ msg string }

func (e errBlindWindow) Error() string { return e.msg }

func errBlind(err error) bool {
	var blind errBlindWindow
	return errors.As(err, &blind)
}

// stepVerdict is what one observed step of a scenario shows.
type stepVerdict int

const (
	// stepPassed: the step saw what a working build does.
	stepPassed stepVerdict = iota
	// stepBroke: it did not, with the bug in evidence on a pristine build
	// (the step counts toward RED); on a patched build any miss.
	stepBroke
	// stepInconclusive: a pristine step that missed with no refusal in
	// evidence. A timeout alone shows that nothing happened in time, not
	// why (a slow runner, a step that never reached the member), so the
	// scenario fails rather than report RED (docs/e2e.md).
	stepInconclusive
)

func (v stepVerdict) String() string {
	switch v {
	case stepPassed:
		return "passed"
	case stepBroke:
		return "broke"
	case stepInconclusive:
		return "inconclusive"
	}
	return "unknown"
}

// judgeStep decides a step from how its wait ended (err, nil when it saw
// what it waited for) and refusal, the first 401 or conflict line the
// component logged where the step could be refused ("" for none). A wait
// ended by its refusal window (errBlindWindow) carries its own evidence.
func judgeStep(pristine bool, err error, refusal string) stepVerdict {
	switch {
	case err == nil:
		return stepPassed
	case !pristine, errBlind(err), refusal != "":
		return stepBroke
	default:
		return stepInconclusive
	}
}
