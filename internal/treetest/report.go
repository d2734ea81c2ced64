package treetest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// State is how the regression tests fared on one tree.
type State string

const (
	// Green: every regression test ran and passed.
	Green State = "GREEN"
	// Red: every regression test ran and at least one failed.
	Red State = "RED"
	// Broken: a regression test did not run (its package did not build,
	// or the test is missing): neither colour can be claimed.
	Broken State = "BROKEN"
	// NoTests: the upstream has no regression tests.
	NoTests State = "NONE"
)

// Result is the test outcome for one pin.
type Result struct {
	Upstream        string `json:"upstream"`
	Version         string `json:"version"`
	HoldfastVersion string `json:"holdfastVersion"`
	SeriesHash      string `json:"seriesHash"`
	Plan            Plan   `json:"plan"`
	// Pristine must be Red: the tests show the bug the series fixes.
	Pristine State `json:"pristine"`
	// Patched must be Green: the series fixes it.
	Patched State `json:"patched"`
	// UpstreamPass says the upstream and carried-library tests of the
	// patched tree passed (everything but the regression tests).
	UpstreamPass bool `json:"upstreamPass"`
	// Failures name what failed, with the go test output that says why.
	Failures []string `json:"failures,omitempty"`
	// PatchedTime and PristineTime are wall-clock go test times.
	PatchedTime  Duration `json:"patchedSeconds"`
	PristineTime Duration `json:"pristineSeconds"`
	// HoldfastCommit is the holdfast commit the report was written from;
	// the release step refuses a report of another commit.
	HoldfastCommit string `json:"holdfastCommit,omitempty"`
	// HoldfastTreeState is "clean" unless the checkout had changes.
	HoldfastTreeState string `json:"holdfastTreeState,omitempty"`
}

// Duration marshals as seconds, rounded to a tenth.
type Duration time.Duration

// MarshalJSON writes seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.1f", time.Duration(d).Seconds())), nil
}

// UnmarshalJSON reads the seconds MarshalJSON writes, so a saved report
// can be read back (the release step gates on it).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var sec float64
	if err := json.Unmarshal(b, &sec); err != nil {
		return fmt.Errorf("duration: want seconds, got %s", b)
	}
	*d = Duration(time.Duration(sec * float64(time.Second)))
	return nil
}

func (d Duration) String() string { return time.Duration(d).Round(100 * time.Millisecond).String() }

// regressionState reads the regression tests' outcome from a run.
func regressionState(run *Run, tests []string) (State, []string) {
	if len(tests) == 0 {
		return NoTests, nil
	}
	var missing []string
	failed := false
	for _, name := range tests {
		ran, passed := run.Test(name)
		switch {
		case !ran:
			missing = append(missing, name)
		case !passed:
			failed = true
		}
	}
	if len(missing) > 0 {
		why := []string{"regression tests did not run: " + strings.Join(missing, ", ")}
		if len(run.BuildFailed) > 0 {
			why = append(why, "packages that did not build: "+strings.Join(run.BuildFailed, ", "))
		}
		return Broken, why
	}
	if failed {
		return Red, nil
	}
	return Green, nil
}

// PatchNoLongerNeeded reports a regression test GREEN on pristine: upstream
// fixed the bug (or the test stopped showing it).
func (r *Result) PatchNoLongerNeeded() bool { return r.Pristine == Green }

// OK reports whether the pin is as it must be: regression RED on pristine,
// GREEN on patched, upstream tests passing.
func (r *Result) OK() bool {
	want := r.Pristine == Red && r.Patched == Green
	if len(r.Plan.RegressionTests) == 0 {
		want = true
	}
	return want && r.UpstreamPass
}

func (s State) describe(want State) string {
	switch {
	case s == NoTests:
		return "none"
	case s == want:
		return string(s) + " (expected)"
	default:
		return string(s) + " (UNEXPECTED)"
	}
}

// Verdict is the one-line conclusion for a person.
func (r *Result) Verdict() string {
	switch {
	case r.OK():
		return "ok"
	case r.PatchNoLongerNeeded():
		return "ACTION: patch no longer needed: upstream fixed it in " + r.Version + " (regression tests pass on pristine); drop the series' fix or check that the test still shows the bug"
	case r.Patched != Green && r.Patched != NoTests:
		return "FAIL: the regression tests are not green on the patched tree"
	case !r.UpstreamPass:
		return "FAIL: upstream tests of the touched packages fail on the patched tree"
	default:
		return "FAIL: the regression tests could not be run on the pristine tree"
	}
}

// WriteText prints the report table for a person, one block per result.
func WriteText(w io.Writer, results []*Result) error {
	for _, r := range results {
		upstream := "PASS"
		if !r.UpstreamPass {
			upstream = "FAIL"
		}
		fmt.Fprintf(w, "%s %s  regression  pristine %s  patched %s  upstream tests of touched pkgs: %s\n",
			r.Upstream, r.Version, r.Pristine.describe(Red), r.Patched.describe(Green), upstream)
		fmt.Fprintf(w, "  %s  series %s  patched run %s (%s), pristine run %s (%s)\n",
			r.HoldfastVersion, r.SeriesHash, r.PatchedTime, strings.Join(r.Plan.Patched(), " "), r.PristineTime, r.Plan.RunPattern())
		for _, f := range r.Failures {
			fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(f, "\n", "\n    "))
		}
		if _, err := fmt.Fprintf(w, "  result: %s\n", r.Verdict()); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown renders the same report as a Markdown table.
func WriteMarkdown(w io.Writer, results []*Result) error {
	fmt.Fprintf(w, "# holdfast test report\n\n")
	fmt.Fprintf(w, "| upstream | version | holdfast version | regression on pristine | regression on patched | upstream tests | result |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		upstream := "PASS"
		if !r.UpstreamPass {
			upstream = "FAIL"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Upstream, r.Version, r.HoldfastVersion,
			r.Pristine.describe(Red), r.Patched.describe(Green), upstream, strings.ReplaceAll(r.Verdict(), "|", "/"))
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n## %s %s\n\n- series hash: `%s`\n- packages tested on patched: `%s` (%s)\n- regression tests: `%s` (pristine run %s)\n",
			r.Upstream, r.Version, r.SeriesHash, strings.Join(r.Plan.Patched(), " "), r.PatchedTime, strings.Join(r.Plan.RegressionTests, " "), r.PristineTime)
		if len(r.Failures) > 0 {
			fmt.Fprintf(w, "\n```\n%s\n```\n", strings.Join(r.Failures, "\n"))
		}
	}
	return nil
}

// WriteJSON renders the results as JSON for tools.
func WriteJSON(w io.Writer, results []*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}
