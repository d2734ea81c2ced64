//go:build karmadacp

package karmadacp

import (
	"fmt"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// scenario is one row of the suite's report, as in the rotation suite
// (e2e/karmada): which build ran, what the suite requires of it, what it
// showed, and the evidence.
type scenario struct {
	t *testing.T
	e2ereport.Scenario
	start  time.Time
	failed bool
}

// begin starts recording a scenario; it is added to the report when the
// test ends. A scenario that ends without an outcome, or whose test failed
// on its account, is recorded as failed.
func begin(t *testing.T, name, binary string, expected e2ereport.Result, notes ...string) *scenario {
	s := &scenario{t: t, start: time.Now(), Scenario: e2ereport.Scenario{
		Suite:    suiteName,
		Name:     name,
		Binary:   binary,
		Expected: expected,
		Timings:  map[string]time.Duration{},
		Notes:    notes,
	}}
	t.Cleanup(func() {
		s.Duration = time.Since(s.start).Round(time.Millisecond)
		if s.Result == "" || s.failed {
			s.Result = e2ereport.Fail
		}
		recorder.Add(s.Scenario)
	})
	return s
}

// notef adds an observation to the report and the test log. Log lines
// reach it through karmada.Lines, which redacts them.
func (s *scenario) notef(format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	s.t.Logf("%s/%s: %s", s.Name, s.Binary, msg)
	s.Notes = append(s.Notes, msg)
}

// timing records a measured duration under name.
func (s *scenario) timing(name string, d time.Duration) {
	s.t.Helper()
	d = d.Round(100 * time.Millisecond)
	s.t.Logf("%s/%s: %s = %s", s.Name, s.Binary, name, d)
	s.Timings[name] = d
}

// fatalf records why the scenario could not reach an outcome and stops it.
func (s *scenario) fatalf(format string, args ...any) {
	s.t.Helper()
	s.failed = true
	msg := fmt.Sprintf(format, args...)
	s.Notes = append(s.Notes, "failed: "+msg)
	s.t.Fatal(msg)
}

// errorf records a failed check and lets the scenario go on.
func (s *scenario) errorf(format string, args ...any) {
	s.t.Helper()
	s.failed = true
	msg := fmt.Sprintf(format, args...)
	s.Notes = append(s.Notes, "failed: "+msg)
	s.t.Error(msg)
}

// outcome records what the build showed; anything but the expected outcome
// fails the test (a pristine build that passes means the scenario no longer
// reproduces the bug).
func (s *scenario) outcome(r e2ereport.Result, format string, args ...any) {
	s.t.Helper()
	s.Result = r
	s.notef(format, args...)
	if r != s.Expected {
		s.t.Errorf("%s with the %s build: %s, want %s", s.Name, s.Binary, r, s.Expected)
	}
}
