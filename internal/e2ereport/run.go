package e2ereport

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Run records one scenario while its test runs, and adds it to the
// Recorder when the test ends. Every suite records through it, so a row
// means the same in each: a check that failed is a failed row whatever
// outcome was claimed before, and a scenario that never reached an outcome
// is not counted as having shown one. Its methods are safe for concurrent
// use (a scenario may observe from several goroutines).
type Run struct {
	t     testing.TB
	start time.Time

	mu     sync.Mutex
	s      Scenario
	failed bool // a check failed through Fatalf or Errorf
	set    bool // Outcome was called
	// implied: a test that ends without failing showed the expected outcome.
	implied bool
	// offCatalogue: the row disagrees with Catalog (it is not listed, or
	// claims another expected outcome), so it fails.
	offCatalogue bool
}

// Begin starts recording s (Name, Binary and any stand-in Notes; Suite
// defaults to the recorder's) for t. Expected is the catalogue's for the
// row: a suite leaves it empty, and one that sets another fails the row,
// as does a row the catalogue does not list. A row of a suite outside the
// catalogue (a test's own) or a setup row expects what it says, or Pass
// when it says nothing. When t ends, s is added with its Result:
// Skipped if t was skipped; Fail if a check failed, or if neither Outcome
// nor PassWithTest said what the scenario showed; else the Outcome.
func (r *Recorder) Begin(t testing.TB, s Scenario) *Run {
	if s.Timings == nil {
		s.Timings = map[string]time.Duration{}
	}
	if s.Suite == "" {
		s.Suite = r.suite
	}
	run := &Run{t: t, start: time.Now(), s: s}
	want, listed := Expectation(s.Suite, s.Name, s.Binary)
	switch {
	case !Catalogued(s.Suite, s.Name, s.Binary):
		// The release requires the catalogue's rows by name: a row it does
		// not know would be reported but never required.
		run.offCatalogue = true
		run.s.Notes = append(run.s.Notes, fmt.Sprintf("scenario %q (%s) is not in e2ereport.Catalog for suite %s: add it there", s.Name, s.Binary, s.Suite))
	case !listed:
	case s.Expected == "":
		run.s.Expected = want
	case s.Expected != want:
		run.offCatalogue = true
		run.s.Notes = append(run.s.Notes, fmt.Sprintf("scenario %q (%s) expects %s; e2ereport.Catalog requires %s of it", s.Name, s.Binary, s.Expected, want))
	}
	if run.s.Expected == "" {
		run.s.Expected = Pass
	}
	t.Cleanup(func() {
		run.mu.Lock()
		defer run.mu.Unlock()
		run.s.Duration = time.Since(run.start).Round(time.Millisecond)
		run.s.Result = run.result()
		r.Add(run.s)
	})
	return run
}

func (run *Run) result() Result {
	switch {
	case run.offCatalogue:
		return Fail
	case run.t.Skipped():
		return Skipped
	case run.failed:
		return Fail
	case run.set:
		return run.s.Result
	case run.implied && !run.t.Failed():
		return run.s.Expected
	default:
		return Fail
	}
}

// PassWithTest makes the test's own verdict the scenario's: if the test
// ends without failing, the scenario showed what it expected. For suites
// whose every check is a test assertion.
func (run *Run) PassWithTest() {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.implied = true
}

// Name is the scenario's name and binary, as its log lines start.
func (run *Run) Name() string { return run.s.Name + "/" + run.s.Binary }

// Notef adds an observation to the report and the test log. Notes are
// redacted (Redact) before either sees them.
func (run *Run) Notef(format string, args ...any) {
	run.t.Helper()
	msg := Redact(fmt.Sprintf(format, args...))
	run.t.Logf("%s: %s", run.Name(), msg)
	run.mu.Lock()
	defer run.mu.Unlock()
	run.s.Notes = append(run.s.Notes, msg)
}

// Timing records a measured duration under name, to the millisecond.
func (run *Run) Timing(name string, d time.Duration) {
	run.t.Helper()
	d = d.Round(time.Millisecond)
	run.t.Logf("%s: %s = %s", run.Name(), name, d)
	run.mu.Lock()
	defer run.mu.Unlock()
	run.s.Timings[name] = d
}

// Mark records that event happened now, on the scenario's clock (since
// Begin); MarkAt with time.Now().
func (run *Run) Mark(event string) {
	run.t.Helper()
	run.MarkAt(event, time.Now())
}

// MarkAt records that event happened at at, as how long after Begin, to
// the millisecond, and logs it. Only the first mark of an event counts:
// "first failure" may be marked from a loop that sees the failure on
// every round. Events are kept in time order.
func (run *Run) MarkAt(event string, at time.Time) {
	run.t.Helper()
	d := at.Sub(run.start).Round(time.Millisecond)
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, e := range run.s.Events {
		if e.Name == event {
			return
		}
	}
	run.t.Logf("%s: %s at %s", run.Name(), event, d)
	i := len(run.s.Events)
	for i > 0 && run.s.Events[i-1].At > d {
		i--
	}
	run.s.Events = slices.Insert(run.s.Events, i, Event{Name: event, At: d})
}

// Fatalf records why the scenario could not reach an outcome and stops
// the test: the report gets the message's first line, the test log all of
// it.
func (run *Run) Fatalf(format string, args ...any) {
	run.t.Helper()
	msg := run.fail(format, args...)
	run.t.Fatal(msg)
}

// Errorf records a failed check and lets the scenario go on.
func (run *Run) Errorf(format string, args ...any) {
	run.t.Helper()
	msg := run.fail(format, args...)
	run.t.Error(msg)
}

// Check is Fatalf("%v", err) when err is not nil.
func (run *Run) Check(err error) {
	run.t.Helper()
	if err != nil {
		run.Fatalf("%v", err)
	}
}

func (run *Run) fail(format string, args ...any) string {
	msg := Redact(fmt.Sprintf(format, args...))
	first, _, _ := strings.Cut(msg, "\n")
	run.mu.Lock()
	defer run.mu.Unlock()
	run.failed = true
	run.s.Notes = append(run.s.Notes, "failed: "+first)
	return msg
}

// Outcome records what the binary showed, with a note saying it.
// Anything but the expected outcome fails the test: a pristine binary that
// passes means the scenario no longer reproduces the bug and proves
// nothing about the patch. The report keeps the outcome as it was, beside
// the expected one.
func (run *Run) Outcome(r Result, format string, args ...any) {
	run.t.Helper()
	run.mu.Lock()
	run.s.Result, run.set = r, true
	expected := run.s.Expected
	run.mu.Unlock()
	run.Notef(format, args...)
	if r != expected {
		run.t.Errorf("%s with the %s build: %s, want %s", run.s.Name, run.s.Binary, r, expected)
	}
}
