package treetest

// Tests written from the mutants `make mutate` found living in this
// package (docs/testing.md): each pins a behaviour no other test observed.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
)

// TestParseSkipsNoiseAndLongLines: go vet and build noise outside the event
// stream is not an error, and one test's output line can be longer than
// the scanner's starting buffer (a dumped object, a long diff).
func TestParseSkipsNoiseAndLongLines(t *testing.T) {
	long := strings.Repeat("x", 100*1024)
	stream := "# m/util\nvet: x.go:1: something\n\n" +
		`{"Action":"output","Package":"m/util","Test":"TestA","Output":"` + long + `\n"}` + "\n" +
		events("m/util TestA fail", "m/util - fail")
	run, err := parse(strings.NewReader(stream))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if run.State("TestA") != Red || !strings.Contains(strings.Join(run.Output, "\n"), long) {
		t.Errorf("state %s, output kept %v", run.State("TestA"), strings.Contains(strings.Join(run.Output, "\n"), long))
	}
}

// TestParseListsEveryPackageThatDidNotBuild: a package that did not build
// is found whatever the order its outcome is met among passing packages.
func TestParseListsEveryPackageThatDidNotBuild(t *testing.T) {
	stream := events("m/a TestA pass", "m/a - pass", "m/b TestB pass", "m/b - pass", "m/c TestC pass", "m/c - pass",
		"m/broken - build-fail")
	// Map order is random: 20 parses make a search that stops at the first
	// passing package miss m/broken with a chance of about 4^-20.
	for i := 0; i < 20; i++ {
		run, err := parse(strings.NewReader(stream))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(run.BuildFailed, []string{"m/broken"}) {
			t.Fatalf("BuildFailed = %q, want [m/broken]", run.BuildFailed)
		}
	}
}

// TestRegressionStateNamesWhatDidNotBuild: the packages that did not build
// are named when a test did not run, and only when some did not build.
func TestRegressionStateNamesWhatDidNotBuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		want   []string
	}{
		{"missing, all built", events("m/util TestHoldfastA pass", "m/util - pass"),
			[]string{"regression tests did not run: TestHoldfastB"}},
		{"missing, one did not build", events("m/util TestHoldfastA pass", "m/util - pass", "m/other - build-fail"),
			[]string{"regression tests did not run: TestHoldfastB", "packages that did not build: m/other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := parse(strings.NewReader(tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			if _, why := regressionState(run, []string{"TestHoldfastA", "TestHoldfastB"}); !reflect.DeepEqual(why, tc.want) {
				t.Errorf("why %q, want %q", why, tc.want)
			}
		})
	}
}

func TestDurationStringRoundsToATenth(t *testing.T) {
	if got := Duration(1234567 * time.Microsecond).String(); got != "1.2s" {
		t.Errorf("String() = %q, want 1.2s", got)
	}
}

// TestFixesNoLongerNeededLooksPastAFixWithoutTests: a fix with no test of
// its own (it supports another) is passed over, not the end of the list.
func TestFixesNoLongerNeededLooksPastAFixWithoutTests(t *testing.T) {
	r := Result{Fixes: []FixResult{
		{Fix: "chart", Supports: []string{"rotation"}},
		{Fix: "rotation", Tests: []TestResult{{Name: "TestA", Pristine: Green, Patched: Green}}},
	}}
	if got := r.FixesNoLongerNeeded(); !reflect.DeepEqual(got, []string{"rotation"}) {
		t.Errorf("FixesNoLongerNeeded() = %q, want [rotation]", got)
	}
}

// TestFixLines: each fix's line names its tests, what it supports, or that
// it has none, and nothing it does not have.
func TestFixLines(t *testing.T) {
	r := Result{Fixes: []FixResult{
		{Fix: "rotation", Patches: []string{"0001-a.patch"}, Tests: []TestResult{{Name: "TestA", Pristine: Red, Patched: Green}}},
		{Fix: "chart", Patches: []string{"0002-b.patch"}, Supports: []string{"rotation"}},
		{Fix: "guard", Patches: []string{"0003-c.patch"}},
	}}
	want := []string{
		"fix rotation (0001-a.patch): TestA pristine RED patched GREEN: ok",
		"fix chart (0002-b.patch): supports rotation: ok",
		"fix guard (0003-c.patch): no regression test: NOT OK",
	}
	if got := r.fixLines(); !reflect.DeepEqual(got, want) {
		t.Errorf("fixLines():\n got %q\nwant %q", got, want)
	}
}

func reportResult(version string, fixes []FixResult, failures []string) *Result {
	return &Result{Upstream: "up", Version: version, HoldfastVersion: version + "-holdfast.1", SeriesHash: "h1:x",
		Pristine: Red, Patched: Green, Fixes: fixes, UpstreamPass: true, Failures: failures}
}

// TestWriteMarkdownExact: the per-pin sections hold the fix lines and the
// failures when there are some, and no empty list or code block when not.
func TestWriteMarkdownExact(t *testing.T) {
	fix := FixResult{Fix: "rotation", Patches: []string{"0001-a.patch"}, Tests: []TestResult{{Name: "TestA", Pristine: Red, Patched: Green}}}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, []*Result{reportResult("v1.0.0", nil, nil), reportResult("v2.0.0", []FixResult{fix}, []string{"patched: why"})}); err != nil {
		t.Fatal(err)
	}
	want := "# holdfast test report\n\n" +
		"| upstream | version | holdfast version | regression on pristine | regression on patched | upstream tests | result |\n" +
		"|---|---|---|---|---|---|---|\n" +
		"| up | v1.0.0 | v1.0.0-holdfast.1 | RED (expected) | GREEN (expected) | PASS | FAIL: no carried fix has a regression test (no fixes in the report) |\n" +
		"| up | v2.0.0 | v2.0.0-holdfast.1 | RED (expected) | GREEN (expected) | PASS | ok |\n" +
		"\n## up v1.0.0\n\n- series hash: `h1:x`\n- packages tested on patched: `` (0s)\n- regression tests: `` (pristine run 0s)\n" +
		"\n## up v2.0.0\n\n- series hash: `h1:x`\n- packages tested on patched: `` (0s)\n- regression tests: `TestA` (pristine run 0s)\n" +
		"\n- fix rotation (0001-a.patch): TestA pristine RED patched GREEN: ok\n" +
		"\n```\npatched: why\n```\n"
	if got := b.String(); got != want {
		t.Errorf("WriteMarkdown:\n got %q\nwant %q", got, want)
	}
}

// TestWriteTextWritesEveryResult: the text report goes on past the first
// pin.
func TestWriteTextWritesEveryResult(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, []*Result{reportResult("v1.0.0", nil, nil), reportResult("v2.0.0", nil, nil)}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "  result: "); n != 2 || !strings.Contains(b.String(), "up v2.0.0  regression") {
		t.Errorf("%d results written, want 2:\n%s", n, b.String())
	}
}

// TestFailKeepsTheLastOutputLines: a failure keeps at most maxOutputLines
// of go test output, saying how many came before; no output, no block.
func TestFailKeepsTheLastOutputLines(t *testing.T) {
	lines := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("l%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		why    []string
		output []string
		want   []string
	}{
		{"nothing wrong", nil, lines(3), nil},
		{"no output", []string{"a", "b"}, nil, []string{"patched: a; b"}},
		{"some output", []string{"a"}, lines(2), []string{"patched: a\nl1\nl2"}},
		{"exactly the bound", []string{"a"}, lines(maxOutputLines), []string{"patched: a\n" + strings.Join(lines(maxOutputLines), "\n")}},
		{"one more", []string{"a"}, lines(maxOutputLines + 1), []string{"patched: a\n... (1 earlier lines)\n" + strings.Join(lines(maxOutputLines + 1)[1:], "\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			r.fail("patched", tc.why, tc.output)
			if !reflect.DeepEqual(r.Failures, tc.want) {
				t.Errorf("Failures %q, want %q", r.Failures, tc.want)
			}
		})
	}
}

// TestClaimsOneTestNamedTwice: a regression test two patches name is
// listed once per fix, for each fix that names it, and is no problem.
func TestClaimsOneTestNamedTwice(t *testing.T) {
	series := []*patchset.Patch{
		patch(t, "0001-a.patch", "rotation", "Holdfast-Regression-Test: TestA\n"),
		patch(t, "0002-b.patch", "rotation", "Holdfast-Regression-Test: TestA\n"),
		patch(t, "0003-c.patch", "guard", "Holdfast-Regression-Test: TestA\n"),
	}
	fixes, _, problems := Claims(series, []string{"TestA"}, "tests/up")
	if len(problems) != 0 {
		t.Errorf("problems %q", problems)
	}
	if len(fixes) != 2 || len(fixes[0].Tests) != 1 || len(fixes[1].Tests) != 1 || fixes[1].Tests[0].Name != "TestA" {
		t.Errorf("fixes %+v: want rotation and guard with TestA once each", fixes)
	}
}

// TestClaimsFixSupportingOnlyItself: "supports" naming its own fix, with no
// test anywhere in that fix, supports nothing and is a problem.
func TestClaimsFixSupportingOnlyItself(t *testing.T) {
	series := []*patchset.Patch{
		patch(t, "0001-a.patch", "rotation", "Holdfast-Regression-Test: TestA\n"),
		patch(t, "0002-b.patch", "guard", "Holdfast-Regression-Test: supports guard\n"),
	}
	_, _, problems := Claims(series, []string{"TestA"}, "tests/up")
	if want := "fix guard supports fix guard, which no patch of the series gives a regression test"; !reflect.DeepEqual(problems, []string{want}) {
		t.Errorf("problems %q, want [%q]", problems, want)
	}
}

// TestNewPlanTouchesGoPackagesOnly: a patch's non-Go files and deleted
// files add no package to test, and the Go files after them still do; the regression test folder may hold other
// files, and a folder named like a test file is walked, not parsed; the go
// command's rules say which functions are tests.
func TestNewPlanTouchesGoPackagesOnly(t *testing.T) {
	p, err := patchset.Parse("0001-a.patch", []byte("Subject: s\nWhy: w\nUpstream-Issue: none\nUpstream-PR: none\nApplied-Upstream: no\nDrop-When: d\nHoldfast-Fix: rotation\nHoldfast-Regression-Test: TestA\n"+
		"---\n"+
		"diff --git a/pkg/a/a.go b/pkg/a/a.go\n--- a/pkg/a/a.go\n+++ b/pkg/a/a.go\n@@ -1 +1 @@\n-a\n+b\n"+
		"diff --git a/deploy/c.yaml b/deploy/c.yaml\n--- a/deploy/c.yaml\n+++ b/deploy/c.yaml\n@@ -1 +1 @@\n-a\n+b\n"+
		"diff --git a/pkg/old/d.go b/pkg/old/d.go\ndeleted file mode 100644\n--- a/pkg/old/d.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"+
		"diff --git a/pkg/b/b.go b/pkg/b/b.go\n--- a/pkg/b/b.go\n+++ b/pkg/b/b.go\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"README.md":                 "# not Go\n",
		"pkg/a/a_test.go":           "package a\n\nimport \"testing\"\n\nfunc Test(t *testing.T) {}\n\nfunc Test_x(t *testing.T) {}\n\nfunc Test1(t *testing.T) {}\n\nfunc TestNoArgs() {}\n\nfunc TestTwo(t *testing.T, n int) {}\n\nfunc Testify(t *testing.T) {}\n",
		"pkg/odd_test.go/b_test.go": "package odd\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := NewPlan([]*patchset.Patch{p}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{
		Touched:            []string{"./pkg/a", "./pkg/b"},
		RegressionPackages: []string{"./pkg/a", "./pkg/odd_test.go"},
		RegressionTests:    []string{"Test", "Test1", "TestB", "Test_x"},
	}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan:\n got %+v\nwant %+v", plan, want)
	}
}

// TestStateCountsATestWhoseSubtestsAllSkippedAsSkipped: a regression test
// written with t.Run whose subtests all skip is reported "pass" at its top
// level by go test, and exercised nothing: SKIPPED (BROKEN for the set),
// never GREEN. One subtest that ran makes it GREEN; a passing subtest
// whose own subtests all skipped counts as skipped.
func TestStateCountsATestWhoseSubtestsAllSkippedAsSkipped(t *testing.T) {
	stream := events(
		"m/util TestAllSkip/a skip", "m/util TestAllSkip/b skip", "m/util TestAllSkip pass",
		"m/util TestOneRan/a skip", "m/util TestOneRan/b pass", "m/util TestOneRan pass",
		"m/util TestNested/a/x skip", "m/util TestNested/a pass", "m/util TestNested/b skip", "m/util TestNested pass",
		"m/util TestNestedRan/a/x pass", "m/util TestNestedRan/a pass", "m/util TestNestedRan pass",
		"m/util TestAllSkipA pass",
		"m/util TestPlain pass",
		"m/util - pass")
	run, err := parse(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]State{
		"TestAllSkip": Skipped, "TestOneRan": Green, "TestNested": Skipped, "TestNestedRan": Green,
		// A test whose name starts with another's is not its subtest.
		"TestAllSkipA": Green, "TestPlain": Green,
	} {
		if got := run.State(name); got != want {
			t.Errorf("State(%s) = %s, want %s", name, got, want)
		}
	}
	if state, why := regressionState(run, []string{"TestAllSkip", "TestPlain"}); state != Broken || !strings.Contains(strings.Join(why, " "), "skipped") {
		t.Errorf("regressionState = %s %q, want BROKEN for a skipped test", state, why)
	}
}

// TestFailedOfNamesTheRedTests: the failure line of a RED patched run names
// the tests that failed, not the ones that passed.
func TestFailedOfNamesTheRedTests(t *testing.T) {
	run, err := parse(strings.NewReader(events("m/util TestA fail", "m/util TestB pass", "m/util - fail")))
	if err != nil {
		t.Fatal(err)
	}
	if got := failedOf(run, []string{"TestA", "TestB"}); !reflect.DeepEqual(got, []string{"TestA"}) {
		t.Errorf("failedOf = %q, want [TestA]", got)
	}
}

// TestSilentFailuresLeaveOutExplainedFailures: a package failed by a test,
// or one that did not build, has its reason already listed; only a package
// failed with neither is a silent failure.
func TestSilentFailuresLeaveOutExplainedFailures(t *testing.T) {
	run, err := parse(strings.NewReader(events("m/a TestX fail", "m/a - fail", "m/b - build-fail", "m/c TestY pass", "m/c - fail")))
	if err != nil {
		t.Fatal(err)
	}
	if got := silentFailures(run); !reflect.DeepEqual(got, []string{"m/c"}) {
		t.Errorf("silentFailures = %q, want [m/c] (failed tests %q, build failed %q)", got, run.FailedTests(nil), run.BuildFailed)
	}
}

// TestDiscountPristineRunsNothingForFailuresOutsideTheImporters: failures
// in packages that are not override importers are kept as they are, with
// no go test on the pristine tree (the runner here has no go command, so
// any run would be an error).
func TestDiscountPristineRunsNothingForFailuresOutsideTheImporters(t *testing.T) {
	r := Runner{Env: []string{"PATH=" + t.TempDir()}}
	failed, build := []string{"example.com/up/pkg/other TestX"}, []string{"example.com/up/pkg/broken"}
	keep, keepBuild, pre, err := r.discountPristine(context.Background(), t.TempDir(), "example.com/up", []string{"./pkg/a"}, failed, build)
	if err != nil {
		t.Fatalf("discountPristine ran something: %v", err)
	}
	if !reflect.DeepEqual(keep, failed) || !reflect.DeepEqual(keepBuild, build) || pre != nil {
		t.Errorf("kept %q and %q, preexisting %q; want every failure kept", keep, keepBuild, pre)
	}
}

// TestAllSubtestsSkippedReadsPastOtherTests: the subtests of other tests
// (in whatever order the map gives them) do not end the look at this
// test's own. Repeated, as each range over a map starts at a random place.
func TestAllSubtestsSkippedReadsPastOtherTests(t *testing.T) {
	subtests := map[string]string{"m TestMine/a": "skip"}
	for i := range 30 {
		subtests[fmt.Sprintf("m TestOther%d/a", i)] = "pass"
	}
	for range 50 {
		if !allSubtestsSkipped(subtests, "m TestMine") {
			t.Fatal("allSubtestsSkipped(TestMine) = false, want true: its only subtest skipped")
		}
	}
}

// TestOverriddenModulesSkipsBlankLines: a blank provenance line names no
// module (and is no reason to panic).
func TestOverriddenModulesSkipsBlankLines(t *testing.T) {
	got := overriddenModules([]string{"", "golang.org/x/net v0.1.0 => v0.2.0 (CVE)", "  "})
	if !reflect.DeepEqual(got, []string{"golang.org/x/net"}) {
		t.Errorf("overriddenModules = %q, want [golang.org/x/net]", got)
	}
}

// TestWriteTextListsImportersAndPreexistingOnlyWhenThere: the text report
// names the override importers and pristine's own failures when there are
// some, and prints no empty line for them when not.
func TestWriteTextListsImportersAndPreexistingOnlyWhenThere(t *testing.T) {
	with := reportResult("v1.0.0", nil, nil)
	with.Plan.OverrideImporters = []string{"./pkg/a"}
	with.Preexisting = []string{"m/pkg/a TestOld"}
	var b bytes.Buffer
	if err := WriteText(&b, []*Result{with}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  importers of overridden modules (tested on patched): ./pkg/a\n", "  fail on pristine too (upstream's, not the overrides'): m/pkg/a TestOld\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText with importers and preexisting failures lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteText(&b, []*Result{reportResult("v1.0.0", nil, nil)}); err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"importers of overridden modules", "fail on pristine too"} {
		if strings.Contains(b.String(), unwanted) {
			t.Errorf("WriteText without any prints %q:\n%s", unwanted, b.String())
		}
	}
}
