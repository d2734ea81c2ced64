package e2ereport

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Result is the outcome of a scenario.
type Result string

const (
	// Pass: the binary did what the scenario checks.
	Pass Result = "pass"
	// Fail: it did not, or the scenario could not reach an outcome.
	Fail Result = "fail"
	// RedAsExpected: a pristine upstream binary showed the bug the patch
	// fixes, which is what proves that the scenario detects it.
	RedAsExpected Result = "red-as-expected"
	// Skipped: the scenario did not run; Notes say why.
	Skipped Result = "skipped"
)

// Scenario is one row of a suite's report: one scenario run against one
// binary.
type Scenario struct {
	Suite    string // "karmada-control-plane", "worker-hub-failover", ...
	Name     string
	Binary   string // "patched" or "pristine"
	Result   Result
	Expected Result
	Duration time.Duration
	// Timings are the measured durations worth reporting, such as
	// "restart-to-recovered".
	Timings map[string]time.Duration
	// Events are the moments the scenario marked (Run.Mark) on its one
	// clock, in the order they happened: how long after the scenario
	// began each was. Unlike Timings, each measured from its own start,
	// they can be compared with each other (Timelines draws them).
	Events []Event
	// Notes are stand-ins, observations and the first error line. Recorder
	// redacts anything that looks like a token.
	Notes []string
}

// Met reports whether the scenario showed what is required of it. For a
// row of the catalogue that is the catalogue's expected outcome: a row
// whose own Expected says otherwise is not met, whatever it showed, since
// the suite that wrote it does not decide what its rows must show (a
// pristine row that passes, expecting to, would otherwise hide a scenario
// that no longer detects the bug). A row of a suite outside the catalogue
// (a test's own) is held to its own Expected.
func (s Scenario) Met() bool {
	if want, listed := Expectation(s.Suite, s.Name, s.Binary); listed && s.Expected != want {
		return false
	}
	return s.Result == s.Expected
}

// Shortfall says why the scenario is not met, or "" when it is.
func (s Scenario) Shortfall() string {
	if want, listed := Expectation(s.Suite, s.Name, s.Binary); listed && s.Expected != want {
		return fmt.Sprintf("%s, and the row expects %s where e2ereport.Catalog requires %s", s.Result, s.Expected, want)
	}
	if s.Result != s.Expected {
		return fmt.Sprintf("%s, expected %s", s.Result, s.Expected)
	}
	return ""
}

// Event is a moment of a scenario: At is how long after the scenario
// began (Recorder.Begin) it happened.
type Event struct {
	Name string
	At   time.Duration
}

// The events a rotation scenario marks, which Timelines draws: the
// stimulus, what the pristine build shows, and what the patched one does.
const (
	// EventRotation: the credential or CA was rotated (the new one in
	// place, the old one no longer accepted).
	EventRotation = "rotation"
	// EventFirstFailure: the build was first seen failing with the
	// rotated credential (the refusal the scenario takes as evidence).
	EventFirstFailure = "first failure"
	// EventRecovery: the build was first seen working past the rotation
	// (what the scenario waits for).
	EventRecovery = "recovery"
)

// eventJSON is Event on the wire, in seconds as the durations are.
type eventJSON struct {
	Name      string  `json:"name"`
	AtSeconds float64 `json:"atSeconds"`
}

// scenarioJSON is Scenario on the wire. Durations are seconds (a number
// every JSON consumer reads) rather than time.Duration's nanosecond count.
type scenarioJSON struct {
	Suite           string             `json:"suite"`
	Name            string             `json:"name"`
	Binary          string             `json:"binary"`
	Result          Result             `json:"result"`
	Expected        Result             `json:"expected"`
	Met             bool               `json:"met"`
	DurationSeconds float64            `json:"durationSeconds"`
	TimingsSeconds  map[string]float64 `json:"timingsSeconds,omitempty"`
	Events          []eventJSON        `json:"events,omitempty"`
	Notes           []string           `json:"notes,omitempty"`
}

// MarshalJSON writes durations as seconds with millisecond precision.
func (s Scenario) MarshalJSON() ([]byte, error) {
	w := scenarioJSON{
		Suite: s.Suite, Name: s.Name, Binary: s.Binary,
		Result: s.Result, Expected: s.Expected, Met: s.Met(),
		DurationSeconds: seconds(s.Duration),
		Notes:           s.Notes,
	}
	if len(s.Timings) > 0 {
		w.TimingsSeconds = make(map[string]float64, len(s.Timings))
		for k, d := range s.Timings {
			w.TimingsSeconds[k] = seconds(d)
		}
	}
	for _, e := range s.Events {
		w.Events = append(w.Events, eventJSON{Name: e.Name, AtSeconds: seconds(e.At)})
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes. "met" is derived, so it is
// not read back.
func (s *Scenario) UnmarshalJSON(data []byte) error {
	var w scenarioJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = Scenario{
		Suite: w.Suite, Name: w.Name, Binary: w.Binary,
		Result: w.Result, Expected: w.Expected,
		Duration: fromSeconds(w.DurationSeconds),
		Notes:    w.Notes,
	}
	if len(w.TimingsSeconds) > 0 {
		s.Timings = make(map[string]time.Duration, len(w.TimingsSeconds))
		for k, v := range w.TimingsSeconds {
			s.Timings[k] = fromSeconds(v)
		}
	}
	for _, e := range w.Events {
		s.Events = append(s.Events, Event{Name: e.Name, At: fromSeconds(e.AtSeconds)})
	}
	return nil
}

func seconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1000) / 1000
}

func fromSeconds(v float64) time.Duration {
	return time.Duration(math.Round(v*1000)) * time.Millisecond
}

// formatDuration is how durations read in the Markdown table: restart and
// recovery times are seconds or less and are compared with each other, so
// they keep hundredths; scenario durations of minutes keep tenths.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}
