package treetest

import (
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
)

func TestFixVerdicts(t *testing.T) {
	red, green := TestResult{Name: "TestA", Pristine: Red, Patched: Green}, TestResult{Name: "TestB", Pristine: Red, Patched: Green}
	with := func(name string, p, q State) TestResult { return TestResult{Name: name, Pristine: p, Patched: q} }
	guard := FixResult{Fix: "guard", Patches: []string{"0002"}, Tests: []TestResult{green}}
	tests := []struct {
		name     string
		r        Result
		ok       bool
		notNeed  bool
		contains string
	}{
		{"each test red then green", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{red}}, guard}, UpstreamPass: true}, true, false, "ok"},
		{"upstream fixed it", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{with("TestA", Green, Green)}}, guard}, UpstreamPass: true}, false, true, "upstream fixed rotation"},
		// One failing test used to make the whole series RED: a second
		// test of the fix that passes on pristine shows nothing.
		{"one test of the fix passes on pristine", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{red, with("TestC", Green, Green)}}, guard}, UpstreamPass: true}, false, false, "fix rotation: TestC is GREEN on the pristine tree"},
		{"a fix without a test", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{red}}, {Fix: "guard", Patches: []string{"0002"}}}, UpstreamPass: true}, false, false, "fix guard has no regression test"},
		{"skipped on patched", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{with("TestA", Red, Skipped)}}, guard}, UpstreamPass: true}, false, false, "TestA is SKIPPED on the patched tree"},
		{"skipped on pristine", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{with("TestA", Skipped, Green)}}, guard}, UpstreamPass: true}, false, false, "TestA is SKIPPED on the pristine tree"},
		{"patch does not fix it", Result{Fixes: []FixResult{{Fix: "rotation", Tests: []TestResult{with("TestA", Red, Red)}}}, UpstreamPass: true}, false, false, "TestA is RED on the patched tree"},
		{"supports a fix with tests", Result{Fixes: []FixResult{guard, {Fix: "chart", Supports: []string{"guard"}}}, UpstreamPass: true}, true, false, "ok"},
		{"supports a fix without tests", Result{Fixes: []FixResult{guard, {Fix: "chart", Supports: []string{"unknown"}}}, UpstreamPass: true}, false, false, "fix chart has no regression test"},
		{"feature test green on patched, no pristine", Result{Fixes: []FixResult{guard}, FeatureTests: []TestResult{{Name: "TestMetrics", Patched: Green}}, UpstreamPass: true}, true, false, "ok"},
		{"feature test skipped", Result{Fixes: []FixResult{guard}, FeatureTests: []TestResult{{Name: "TestMetrics", Patched: Skipped}}, UpstreamPass: true}, false, false, "feature test TestMetrics is SKIPPED"},
		{"upstream tests fail", Result{Fixes: []FixResult{guard}}, false, false, "upstream tests"},
		{"a naming problem", Result{Fixes: []FixResult{guard}, Problems: []string{"TestZ in tests/up is named by no patch"}, UpstreamPass: true}, false, false, "TestZ"},
		{"no fixes", Result{UpstreamPass: true}, false, false, "FAIL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.OK(); got != tc.ok {
				t.Errorf("OK() = %v, want %v", got, tc.ok)
			}
			if got := tc.r.PatchNoLongerNeeded(); got != tc.notNeed {
				t.Errorf("PatchNoLongerNeeded() = %v, want %v", got, tc.notNeed)
			}
			if v := tc.r.Verdict(); !strings.Contains(v, tc.contains) {
				t.Errorf("Verdict() = %q, want it to contain %q", v, tc.contains)
			}
		})
	}
}

func patch(t *testing.T, name, fix, fields string) *patchset.Patch {
	t.Helper()
	p, err := patchset.Parse(name, []byte("Subject: s\nWhy: w\nUpstream-Issue: none\nUpstream-PR: none\nApplied-Upstream: no\nDrop-When: d\nHoldfast-Fix: "+fix+"\n"+fields+
		"---\ndiff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClaims(t *testing.T) {
	series := []*patchset.Patch{
		patch(t, "0001-a.patch", "rotation", "Holdfast-Regression-Test: TestA TestB\n"),
		patch(t, "0002-b.patch", "guard", "Holdfast-Regression-Test: TestGuard\nHoldfast-Feature-Test: TestMetrics\n"),
		patch(t, "0003-c.patch", "chart", "Holdfast-Regression-Test: supports guard rotation\n"),
		patch(t, "0004-d.patch", "guard", "Holdfast-Regression-Test: supports guard\n"),
	}
	fixes, features, problems := Claims(series, []string{"TestA", "TestB", "TestGuard", "TestMetrics"}, "tests/up")
	if len(problems) != 0 {
		t.Fatalf("problems %q", problems)
	}
	if len(fixes) != 3 || fixes[0].Fix != "rotation" || len(fixes[0].Tests) != 2 || fixes[1].Fix != "guard" || len(fixes[1].Supports) != 0 ||
		strings.Join(fixes[1].Patches, " ") != "0002-b.patch 0004-d.patch" || strings.Join(fixes[2].Supports, " ") != "guard rotation" {
		t.Errorf("fixes %+v", fixes)
	}
	if len(features) != 1 || features[0].Name != "TestMetrics" || features[0].Pristine != "" {
		t.Errorf("feature tests %+v", features)
	}

	for _, tc := range []struct {
		name   string
		series []*patchset.Patch
		found  []string
		want   string
	}{
		{"tests folder missing or empty", series[:1], nil, "no Test function in tests/up"},
		{"a named test was renamed", series[:1], []string{"TestA", "TestB2"}, "0001-a.patch names regression test TestB, which is not a Test function in tests/up"},
		{"a test no patch names", series[:1], []string{"TestA", "TestB", "TestExtra"}, "TestExtra in tests/up is named by no patch"},
		{"a patch naming no test", []*patchset.Patch{patch(t, "0001-a.patch", "rotation", "")}, []string{"TestA"}, "0001-a.patch (fix rotation) names no regression test"},
		{"supports an unknown fix", []*patchset.Patch{series[0], patch(t, "0002-c.patch", "chart", "Holdfast-Regression-Test: supports nothing\n")}, []string{"TestA", "TestB"}, "fix chart supports fix nothing, which no patch of the series gives a regression test"},
		{"one test both kinds", []*patchset.Patch{series[0], patch(t, "0002-b.patch", "guard", "Holdfast-Regression-Test: TestA\nHoldfast-Feature-Test: TestA\n")}, []string{"TestA", "TestB"}, "it is one or the other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, problems := Claims(tc.series, tc.found, "tests/up")
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("problems %q lack %q", problems, tc.want)
			}
		})
	}
}
