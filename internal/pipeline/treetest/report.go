package treetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// State is how a regression test (or all of them) fared on one tree.
type State string

const (
	// Green: the test ran and passed (for a set: every one did).
	Green State = "GREEN"
	// Red: the test ran and failed (for a set: every one ran and at least
	// one failed).
	Red State = "RED"
	// Skipped: the test ran and skipped itself: it exercised nothing, so
	// it shows neither colour.
	Skipped State = "SKIPPED"
	// Broken: a regression test did not run (its package did not build,
	// or the test is missing) or skipped: neither colour can be claimed.
	Broken State = "BROKEN"
	// NoTests: the upstream has no regression tests, which is never ok.
	NoTests State = "NONE"
)

// TestResult is one named test's outcome on each tree.
type TestResult struct {
	Name string `json:"name"`
	// Pristine is empty for a feature test, which runs on patched only.
	Pristine State `json:"pristine,omitempty"`
	Patched  State `json:"patched"`
}

// FixResult is the RED/GREEN verdict of one carried fix (the patches
// sharing a Holdfast-Fix id).
type FixResult struct {
	Fix     string   `json:"fix"`
	Patches []string `json:"patches"`
	// Tests are the regression tests its patches name: each must be RED
	// on pristine and GREEN on patched.
	Tests []TestResult `json:"tests,omitempty"`
	// Supports are the fixes whose tests cover a fix with no test of its
	// own ("Holdfast-Regression-Test: supports <fix-id>...").
	Supports []string `json:"supports,omitempty"`
}

// Result is the test outcome for one pin.
type Result struct {
	Upstream        string `json:"upstream"`
	Version         string `json:"version"`
	HoldfastVersion string `json:"holdfastVersion"`
	SeriesHash      string `json:"seriesHash"`
	Plan            Plan   `json:"plan"`
	// Pristine and Patched summarise the regression tests on each tree
	// for a person; the verdict is per fix (Fixes).
	Pristine State `json:"pristine"`
	Patched  State `json:"patched"`
	// Fixes are the per-fix verdicts, one per Holdfast-Fix id of the
	// series. A report without any is not ok.
	Fixes []FixResult `json:"fixes"`
	// FeatureTests run on the patched tree only and must pass there.
	FeatureTests []TestResult `json:"featureTests,omitempty"`
	// Problems are what is wrong with the series' test naming itself: a
	// patch naming no test, a named test missing from tests/<upstream>/,
	// a test there that no patch names.
	Problems []string `json:"problems,omitempty"`
	// UpstreamPass says the upstream and carried-library tests of the
	// patched tree passed (everything but the regression tests).
	UpstreamPass bool `json:"upstreamPass"`
	// Failures name what failed, with the go test output that says why.
	Failures []string `json:"failures,omitempty"`
	// Preexisting are tests of override importers that failed on the
	// patched tree and fail on the pristine twin too: upstream's own
	// failures, not the overrides', reported and not counted.
	Preexisting []string `json:"preexisting,omitempty"`
	// GODEBUG is each shipped main package's DefaultGODEBUG on both
	// trees; a difference is a failure.
	GODEBUG []GodebugResult `json:"godebug,omitempty"`
	// PatchedTime and PristineTime are wall-clock go test times.
	PatchedTime  Duration `json:"patchedSeconds"`
	PristineTime Duration `json:"pristineSeconds"`
	// HoldfastCommit is the holdfast commit the report was written from;
	// the release step refuses a report of another commit.
	HoldfastCommit string `json:"holdfastCommit,omitempty"`
	// HoldfastTreeState is "clean" unless the checkout had changes; the
	// release step refuses a report of a dirty checkout.
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

// regressionState reads the outcome of a set of regression tests from a
// run, for the summary columns: a test that did not run or skipped makes
// the set Broken, naming it.
func regressionState(run *Run, tests []string) (State, []string) {
	if len(tests) == 0 {
		return NoTests, nil
	}
	var missing, skipped []string
	failed := false
	for _, name := range tests {
		switch run.State(name) {
		case Broken:
			missing = append(missing, name)
		case Skipped:
			skipped = append(skipped, name)
		case Red:
			failed = true
		}
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, "regression tests did not run: "+strings.Join(missing, ", "))
		if len(run.BuildFailed) > 0 {
			why = append(why, "packages that did not build: "+strings.Join(run.BuildFailed, ", "))
		}
	}
	if len(skipped) > 0 {
		why = append(why, "regression tests skipped (a skipped test exercises nothing): "+strings.Join(skipped, ", "))
	}
	switch {
	case len(why) > 0:
		return Broken, why
	case failed:
		return Red, nil
	}
	return Green, nil
}

// fixOK reports whether f is proven: each of its tests RED on pristine and
// GREEN on patched, or, for a fix with no test of its own, every fix it
// supports has tests.
func (r *Result) fixOK(f FixResult) bool {
	if len(f.Tests) == 0 {
		if len(f.Supports) == 0 {
			return false
		}
		for _, s := range f.Supports {
			if g := r.fix(s); g == nil || len(g.Tests) == 0 {
				return false
			}
		}
		return true
	}
	for _, t := range f.Tests {
		if t.Pristine != Red || t.Patched != Green {
			return false
		}
	}
	return true
}

func (r *Result) fix(id string) *FixResult {
	for i := range r.Fixes {
		if r.Fixes[i].Fix == id {
			return &r.Fixes[i]
		}
	}
	return nil
}

// PatchNoLongerNeeded reports a fix whose regression tests are all GREEN
// on pristine: upstream fixed the bug (or the tests stopped showing it).
func (r *Result) PatchNoLongerNeeded() bool { return len(r.FixesNoLongerNeeded()) > 0 }

// FixesNoLongerNeeded names the fixes whose every regression test passes
// on pristine. Feature tests never count: no pristine release passes them.
func (r *Result) FixesNoLongerNeeded() []string {
	var ids []string
	for _, f := range r.Fixes {
		if len(f.Tests) == 0 {
			continue
		}
		all := true
		for _, t := range f.Tests {
			all = all && t.Pristine == Green
		}
		if all {
			ids = append(ids, f.Fix)
		}
	}
	return ids
}

// OK reports whether the pin is as it must be: every fix of the series has
// regression tests, each RED on pristine and GREEN on patched; feature
// tests GREEN on patched; nothing skipped; upstream tests passing.
func (r *Result) OK() bool {
	if !r.UpstreamPass || len(r.Problems) > 0 || len(r.Fixes) == 0 {
		return false
	}
	for _, f := range r.Fixes {
		if !r.fixOK(f) {
			return false
		}
	}
	for _, t := range r.FeatureTests {
		if t.Patched != Green {
			return false
		}
	}
	return true
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
	case len(r.Fixes) == 0:
		return "FAIL: no carried fix has a regression test (no fixes in the report)"
	case r.PatchNoLongerNeeded():
		return "ACTION: patch no longer needed: upstream fixed " + strings.Join(r.FixesNoLongerNeeded(), ", ") + " in " + r.Version + " (its regression tests pass on pristine); drop the series' fix or check that the test still shows the bug"
	case len(r.Problems) > 0:
		return "FAIL: " + r.Problems[0]
	}
	for _, f := range r.Fixes {
		if r.fixOK(f) {
			continue
		}
		if len(f.Tests) == 0 {
			return "FAIL: fix " + f.Fix + " has no regression test that is RED on pristine and GREEN on patched"
		}
		for _, t := range f.Tests {
			switch {
			case t.Patched != Green:
				return fmt.Sprintf("FAIL: fix %s: %s is %s on the patched tree, not GREEN", f.Fix, t.Name, t.Patched)
			case t.Pristine != Red:
				return fmt.Sprintf("FAIL: fix %s: %s is %s on the pristine tree, not RED", f.Fix, t.Name, t.Pristine)
			}
		}
	}
	for _, t := range r.FeatureTests {
		if t.Patched != Green {
			return fmt.Sprintf("FAIL: feature test %s is %s on the patched tree, not GREEN", t.Name, t.Patched)
		}
	}
	return "FAIL: upstream tests of the touched packages fail on the patched tree"
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
			r.HoldfastVersion, r.SeriesHash, r.PatchedTime, strings.Join(r.Plan.Patched(), " "), r.PristineTime, runPattern(r.regressionTests()))
		if len(r.Plan.OverrideImporters) > 0 {
			fmt.Fprintf(w, "  importers of overridden modules (tested on patched): %s\n", strings.Join(r.Plan.OverrideImporters, " "))
		}
		if len(r.Preexisting) > 0 {
			fmt.Fprintf(w, "  fail on pristine too (upstream's, not the overrides'): %s\n", strings.Join(r.Preexisting, ", "))
		}
		for _, g := range r.GODEBUG {
			fmt.Fprintf(w, "  DefaultGODEBUG %s: %s\n", g.Package, g.verdict())
		}
		for _, line := range r.fixLines() {
			fmt.Fprintf(w, "  %s\n", line)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "    problem: %s\n", p)
		}
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
	// Rendered whole, then written once, so that the one write's error (a
	// full disk) reaches SaveReports, which must not rename a truncated file
	// over a good report.
	var b bytes.Buffer
	fmt.Fprintf(&b, "# holdfast test report\n\n")
	fmt.Fprintf(&b, "| upstream | version | holdfast version | regression on pristine | regression on patched | upstream tests | result |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		upstream := "PASS"
		if !r.UpstreamPass {
			upstream = "FAIL"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Upstream, r.Version, r.HoldfastVersion,
			r.Pristine.describe(Red), r.Patched.describe(Green), upstream, strings.ReplaceAll(r.Verdict(), "|", "/"))
	}
	for _, r := range results {
		fmt.Fprintf(&b, "\n## %s %s\n\n- series hash: `%s`\n- packages tested on patched: `%s` (%s)\n- regression tests: `%s` (pristine run %s)\n",
			r.Upstream, r.Version, r.SeriesHash, strings.Join(r.Plan.Patched(), " "), r.PatchedTime, strings.Join(r.regressionTests(), " "), r.PristineTime)
		if len(r.Plan.OverrideImporters) > 0 {
			fmt.Fprintf(w, "- importers of overridden modules (tested on patched): `%s`\n", strings.Join(r.Plan.OverrideImporters, " "))
		}
		if len(r.Preexisting) > 0 {
			fmt.Fprintf(w, "- fail on pristine too (upstream's, not the overrides'): `%s`\n", strings.Join(r.Preexisting, ", "))
		}
		for _, g := range r.GODEBUG {
			fmt.Fprintf(w, "- DefaultGODEBUG `%s`: %s\n", g.Package, g.verdict())
		}
		if lines := r.fixLines(); len(lines) > 0 {
			fmt.Fprintf(&b, "\n")
			for _, line := range lines {
				fmt.Fprintf(&b, "- %s\n", line)
			}
		}
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- problem: %s\n", p)
		}
		if len(r.Failures) > 0 {
			fmt.Fprintf(&b, "\n```\n%s\n```\n", strings.Join(r.Failures, "\n"))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSON renders the results as JSON for tools.
func WriteJSON(w io.Writer, results []*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// fixLines is one line per fix and per feature test: what each test showed
// on each tree, and whether that is what the fix needs.
func (r *Result) fixLines() []string {
	var lines []string
	for _, f := range r.Fixes {
		verdict := "ok"
		if !r.fixOK(f) {
			verdict = "NOT OK"
		}
		var tests []string
		for _, t := range f.Tests {
			tests = append(tests, fmt.Sprintf("%s pristine %s patched %s", t.Name, t.Pristine, t.Patched))
		}
		if len(f.Supports) > 0 {
			tests = append(tests, "supports "+strings.Join(f.Supports, ", "))
		}
		if len(tests) == 0 {
			tests = []string{"no regression test"}
		}
		lines = append(lines, fmt.Sprintf("fix %s (%s): %s: %s", f.Fix, strings.Join(f.Patches, ", "), strings.Join(tests, "; "), verdict))
	}
	for _, t := range r.FeatureTests {
		verdict := "ok"
		if t.Patched != Green {
			verdict = "NOT OK"
		}
		lines = append(lines, fmt.Sprintf("feature test %s (patched only) patched %s: %s", t.Name, t.Patched, verdict))
	}
	return lines
}
