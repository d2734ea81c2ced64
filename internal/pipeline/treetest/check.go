package treetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// maxOutputLines bounds the go test output kept per failure: enough for a
// panic's first frames or a compile error list, not a whole test log.
const maxOutputLines = 40

// Check builds (or reuses) the pin's patched and pristine trees and runs
// the plan on both. The released tree, upstream's own dependency versions,
// answers what those versions decide: the GODEBUG defaults the shipped
// binaries must keep, and whether an override importer's failure is
// upstream's own.
func Check(ctx context.Context, c pipeline.Config, r Runner, up *pins.Upstream, pin pins.Pin) (*Result, error) {
	r.Tags = pin.Tags
	patched, err := c.Build(ctx, up, pin, provenance.Patched)
	if err != nil {
		return nil, err
	}
	pristineTree, err := c.Build(ctx, up, pin, provenance.Pristine)
	if err != nil {
		return nil, err
	}
	released, err := c.Build(ctx, up, pin, provenance.Released)
	if err != nil {
		return nil, err
	}
	in, err := c.LoadInputs(up, pin.Series)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(in.Series, up.Carry, filepath.Join(c.Root, pipeline.TestsDir(up)))
	if err != nil {
		return nil, err
	}
	// Dependency overrides change upstream code paths: the packages that
	// call into a moved module run their own tests with the new versions.
	if plan.OverrideImporters, err = r.OverrideImporters(ctx, patched.Dir, overriddenModules(patched.Record.Overrides)); err != nil {
		return nil, err
	}
	res := &Result{
		Upstream: up.Name, Version: pin.Version, HoldfastVersion: patched.Record.HoldfastVersion,
		SeriesHash: patched.Record.SeriesHash, Plan: plan, Pristine: NoTests, Patched: NoTests,
	}
	// The shipped binaries keep upstream's GODEBUG defaults, whatever go
	// line the overrides raised.
	godebug, differ, err := r.compareGODEBUG(ctx, patched.Dir, released.Dir, up.Build)
	if err != nil {
		return nil, err
	}
	res.GODEBUG = godebug
	res.fail("patched", differ, nil)
	res.Fixes, res.FeatureTests, res.Problems = Claims(in.Series, plan.RegressionTests, pipeline.TestsDir(up))
	regression, features := res.regressionTests(), res.featureTests()
	run, err := r.GoTest(ctx, patched.Dir, nil, plan.Patched())
	if err != nil {
		return nil, err
	}
	res.PatchedTime = Duration(run.Duration)
	res.eachTest(func(t *TestResult) { t.Patched = run.State(t.Name) })
	var why []string
	res.Patched, why = regressionState(run, append(slices.Clone(regression), features...))
	res.fail("patched", why, nil)
	if res.Patched == Red {
		res.fail("patched", []string{"regression tests fail: " + strings.Join(failedOf(run, append(slices.Clone(regression), features...)), ", ")}, run.Output)
	}
	// Every test of tests/<upstream>/ is accounted for by the fixes (an
	// unnamed one is a Problem), so none counts against upstream.
	// A package can fail with every reported test passed (a timeout's
	// panic, a TestMain exit): silentFailures counts it, as for importers.
	others, buildFailed, silent := run.FailedTests(plan.RegressionTests), run.BuildFailed, silentFailures(run)
	output := run.Output
	if extra := plan.importersOnly(); len(extra) > 0 {
		// A run of their own, with a shorter timeout than go test's 10
		// minutes: these are upstream tests holdfast did not choose, and
		// one of Karmada's hangs until the timeout on pristine too.
		imp, err := r.GoTest(ctx, patched.Dir, []string{"-timeout", importerTimeout}, extra)
		if err != nil {
			return nil, err
		}
		res.PatchedTime += Duration(imp.Duration)
		impFailed, impBuild := imp.FailedTests(nil), append(slices.Clone(imp.BuildFailed), silentFailures(imp)...)
		if len(impFailed) > 0 || len(impBuild) > 0 {
			if impFailed, impBuild, res.Preexisting, err = r.discountPristine(ctx, released.Dir, patched.Record.Module, extra, impFailed, impBuild); err != nil {
				return nil, err
			}
		}
		others, buildFailed = append(others, impFailed...), append(slices.Clone(buildFailed), impBuild...)
		if len(impFailed) > 0 || len(impBuild) > 0 {
			output = append(slices.Clone(output), imp.Output...)
		}
	}
	res.UpstreamPass = len(others) == 0 && len(buildFailed) == 0 && len(silent) == 0
	if !res.UpstreamPass {
		why := append(prefix("failed: ", others), prefix("did not build: ", buildFailed)...)
		res.fail("patched", append(why, prefix("failed with no failing test (timed out, or TestMain exited): ", silent)...), output)
	}
	if len(regression) > 0 {
		run, err := r.GoTest(ctx, pristineTree.Dir, []string{"-run", runPattern(regression)}, plan.RegressionPackages)
		if err != nil {
			return nil, err
		}
		res.PristineTime = Duration(run.Duration)
		for i := range res.Fixes {
			for j := range res.Fixes[i].Tests {
				t := &res.Fixes[i].Tests[j]
				t.Pristine = run.State(t.Name)
			}
		}
		res.Pristine, why = regressionState(run, regression)
		res.fail("pristine", why, run.Output)
		if passed := passedOf(run, regression); len(passed) > 0 {
			res.fail("pristine", []string{"regression tests pass on pristine (they do not show the bug, or upstream fixed it): " + strings.Join(passed, ", ")}, nil)
		}
	}
	return res, nil
}

// Claims reads, per fix of the series, the regression tests its patches
// name (Holdfast-Regression-Test) and the feature tests (patched only,
// Holdfast-Feature-Test), checked against the Test functions found in the
// regression test folder (found; testsDir names it in messages). Problems
// say what makes the naming itself wrong: a patch that names no test and
// supports no fix, a named test that is not in the folder, a test there
// that no patch names (renamed, or forgotten), a fix supported but
// unknown or without tests.
func Claims(series []*patchset.Patch, found []string, testsDir string) (fixes []FixResult, features []TestResult, problems []string) {
	exists := map[string]bool{}
	for _, name := range found {
		exists[name] = true
	}
	named := map[string]string{} // test -> what named it first
	byFix := map[string]*FixResult{}
	var order []string
	claim := func(p *patchset.Patch, test, kind string) bool {
		if !exists[test] {
			problems = append(problems, fmt.Sprintf("%s names %s test %s, which is not a Test function in %s", p.Name(), kind, test, testsDir))
		}
		if prev, dup := named[test]; dup && prev != kind {
			problems = append(problems, fmt.Sprintf("%s names %s as a %s test; another patch names it a %s test: it is one or the other", p.Name(), test, kind, prev))
			return false
		}
		first := named[test] == ""
		named[test] = kind
		return first || kind == "regression"
	}
	for _, p := range series {
		id := p.Header.HoldfastFix
		f := byFix[id]
		if f == nil {
			f = &FixResult{Fix: id}
			byFix[id] = f
			order = append(order, id)
		}
		f.Patches = append(f.Patches, p.Name())
		tests, supports, err := p.Header.RegressionTests()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.Name(), err))
		}
		if len(tests) == 0 && len(supports) == 0 {
			problems = append(problems, fmt.Sprintf("%s (fix %s) names no regression test: add Holdfast-Regression-Test: TestXxx (fails on pristine, passes on patched), or \"supports <fix-id>\" for a patch with no test of its own", p.Name(), id))
		}
		for _, t := range tests {
			if claim(p, t, "regression") && !slices.ContainsFunc(f.Tests, func(r TestResult) bool { return r.Name == t }) {
				f.Tests = append(f.Tests, TestResult{Name: t, Pristine: Broken, Patched: Broken})
			}
		}
		for _, s := range supports {
			if !slices.Contains(f.Supports, s) {
				f.Supports = append(f.Supports, s)
			}
		}
		ft, err := p.Header.FeatureTests()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.Name(), err))
		}
		for _, t := range ft {
			if claim(p, t, "feature") {
				features = append(features, TestResult{Name: t, Patched: Broken})
			}
		}
	}
	for _, id := range order {
		f := byFix[id]
		// Its own tests cover a patch that supports its own fix.
		if len(f.Tests) > 0 {
			f.Supports = slices.DeleteFunc(f.Supports, func(s string) bool { return s == id })
		}
		for _, s := range f.Supports {
			if g := byFix[s]; g == nil || len(g.Tests) == 0 {
				problems = append(problems, fmt.Sprintf("fix %s supports fix %s, which no patch of the series gives a regression test", id, s))
			}
		}
		fixes = append(fixes, *f)
	}
	for _, name := range found {
		if named[name] == "" {
			problems = append(problems, fmt.Sprintf("%s in %s is named by no patch (Holdfast-Regression-Test or Holdfast-Feature-Test): a test no fix claims proves nothing", name, testsDir))
		}
	}
	if len(found) == 0 {
		problems = append(problems, fmt.Sprintf("no Test function in %s: every carried fix needs a regression test there", testsDir))
	}
	return fixes, features, problems
}

// regressionTests lists, once each and sorted, the tests the fixes name.
func (r *Result) regressionTests() []string {
	set := map[string]bool{}
	for _, f := range r.Fixes {
		for _, t := range f.Tests {
			set[t.Name] = true
		}
	}
	return sortedKeys(set)
}

func (r *Result) featureTests() []string {
	var names []string
	for _, t := range r.FeatureTests {
		names = append(names, t.Name)
	}
	return names
}

func (r *Result) eachTest(f func(*TestResult)) {
	for i := range r.Fixes {
		for j := range r.Fixes[i].Tests {
			f(&r.Fixes[i].Tests[j])
		}
	}
	for i := range r.FeatureTests {
		f(&r.FeatureTests[i])
	}
}

func failedOf(run *Run, tests []string) []string {
	var out []string
	for _, t := range tests {
		if run.State(t) == Red {
			out = append(out, t)
		}
	}
	return out
}

func passedOf(run *Run, tests []string) []string {
	var out []string
	for _, t := range tests {
		if run.State(t) == Green {
			out = append(out, t)
		}
	}
	return out
}

// runPattern is the -run expression selecting exactly tests.
func runPattern(tests []string) string {
	return "^(" + strings.Join(tests, "|") + ")$"
}

func (r *Result) fail(tree string, why, output []string) {
	if len(why) == 0 {
		return
	}
	msg := tree + ": " + strings.Join(why, "; ")
	if len(output) > maxOutputLines {
		output = append([]string{fmt.Sprintf("... (%d earlier lines)", len(output)-maxOutputLines)}, output[len(output)-maxOutputLines:]...)
	}
	if len(output) > 0 {
		msg += "\n" + strings.Join(output, "\n")
	}
	r.Failures = append(r.Failures, msg)
}

// discountPristine runs the tests of the override importers that failed on
// the patched tree on the released tree as well (not the pristine twin,
// which carries the overrides): a test (or a package that does not build)
// failing there too fails with upstream's own versions, so the overrides
// did not cause it. Those are returned as preexisting and left out of the
// upstream verdict; failures outside the importers, and importer failures
// the release does not share, stay.
// ImporterTimeout bounds each package's tests in the override importers'
// run (patched and pristine): long enough for a unit test package on a
// loaded 2-core machine, short enough that a hanging upstream test costs
// minutes, not the CI budget.
const ImporterTimeout = "3m"

// importerTimeout is ImporterTimeout; tests shorten it.
var importerTimeout = ImporterTimeout

// silentFailures are the packages that failed with no failed test and no
// build failure to show for it: a test binary that timed out (go test's
// panic names no failed test in its events) or exited early. Listed like
// build failures, so they count.
func silentFailures(run *Run) []string {
	var out []string
	for _, pkg := range run.FailedPackages() {
		if !slices.Contains(run.BuildFailed, pkg) && !slices.ContainsFunc(run.FailedTests(nil), func(key string) bool { return strings.HasPrefix(key, pkg+" ") }) {
			out = append(out, pkg)
		}
	}
	return out
}

func (r Runner) discountPristine(ctx context.Context, released, module string, importers, failed, buildFailed []string) (keep, keepBuild, preexisting []string, err error) {
	importPath := map[string]string{} // import path -> pattern
	for _, p := range importers {
		ip := module
		if p != "." {
			ip += "/" + strings.TrimPrefix(p, "./")
		}
		importPath[ip] = p
	}
	var pkgs []string
	seen := map[string]bool{}
	consider := func(pkg string) {
		p, ok := importPath[pkg]
		if !ok || seen[p] {
			return
		}
		// Carried libraries and overlay packages exist only in the
		// patched tree: nothing to compare with.
		if _, err := os.Stat(filepath.Join(released, filepath.FromSlash(p))); err == nil {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	for _, key := range failed {
		pkg, _, _ := strings.Cut(key, " ")
		consider(pkg)
	}
	for _, pkg := range buildFailed {
		consider(pkg)
	}
	if len(pkgs) == 0 {
		return failed, buildFailed, nil, nil
	}
	sort.Strings(pkgs)
	base, err := r.GoTest(ctx, released, []string{"-timeout", importerTimeout}, pkgs)
	if err != nil {
		return nil, nil, nil, err
	}
	baseFailed := map[string]bool{}
	for _, key := range base.FailedTests(nil) {
		baseFailed[key] = true
	}
	for _, pkg := range append(slices.Clone(base.BuildFailed), silentFailures(base)...) {
		baseFailed[pkg] = true
	}
	for _, key := range failed {
		if baseFailed[key] {
			preexisting = append(preexisting, key)
		} else {
			keep = append(keep, key)
		}
	}
	for _, pkg := range buildFailed {
		if baseFailed[pkg] {
			preexisting = append(preexisting, pkg+" (package failed: does not build, or timed out)")
		} else {
			keepBuild = append(keepBuild, pkg)
		}
	}
	return keep, keepBuild, preexisting, nil
}

func prefix(p string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = p + s
	}
	return out
}

// PristineCheck returns the check rebase.Options.PristineCheck wants: it
// runs the regression tests found in testsDir on a pristine tree and says
// whether they pass there (upstream fixed the bug). Feature tests (named by
// Holdfast-Feature-Test in any series of the upstream, FeatureTests) are
// left out: no pristine release passes them, so they would hide a fix
// upstream made. A test that does not build, run or skips is an error, not
// a verdict.
func PristineCheck(r Runner, testsDir string, featureTests []string) func(ctx context.Context, tree string) (bool, string, error) {
	return func(ctx context.Context, tree string) (bool, string, error) {
		plan, err := NewPlan(nil, nil, testsDir)
		if err != nil {
			return false, "", err
		}
		tests := slices.DeleteFunc(slices.Clone(plan.RegressionTests), func(t string) bool { return slices.Contains(featureTests, t) })
		if len(tests) == 0 {
			return false, "", fmt.Errorf("no regression tests in %s", testsDir)
		}
		run, err := r.GoTest(ctx, tree, []string{"-run", runPattern(tests)}, plan.RegressionPackages)
		if err != nil {
			return false, "", err
		}
		state, why := regressionState(run, tests)
		detail := fmt.Sprintf("%s: %s", strings.Join(tests, ", "), state)
		switch state {
		case Green:
			return true, detail, nil
		case Red:
			return false, detail, nil
		default:
			return false, "", fmt.Errorf("%s", strings.Join(why, "; "))
		}
	}
}

// FeatureTests lists the tests the patches of the series name with
// Holdfast-Feature-Test.
func FeatureTests(series ...[]*patchset.Patch) []string {
	set := map[string]bool{}
	for _, s := range series {
		for _, p := range s {
			names, _ := p.Header.FeatureTests() // checked when the patch was parsed
			for _, n := range names {
				set[n] = true
			}
		}
	}
	return sortedKeys(set)
}

// SaveReports writes results as dir/name.md and dir/name.json, each
// through a temporary file and a rename so a reader never sees half a
// report.
func SaveReports(dir, name string, results []*Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, out := range []struct {
		ext   string
		write func(*os.File) error
	}{
		{".md", func(f *os.File) error { return WriteMarkdown(f, results) }},
		{".json", func(f *os.File) error { return WriteJSON(f, results) }},
	} {
		ext, write := out.ext, out.write
		dest := filepath.Join(dir, name+ext)
		tmp, err := os.CreateTemp(dir, "."+name+ext+".*")
		if err != nil {
			return nil, err
		}
		err = write(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dest)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, fmt.Errorf("writing %s: %w", dest, err)
		}
		written = append(written, dest)
	}
	return written, nil
}
