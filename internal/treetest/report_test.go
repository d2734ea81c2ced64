package treetest

import (
	"strings"
	"testing"
)

// events builds a test2json stream: one "pkg test action" per line, test
// "-" meaning the package itself.
func events(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		f := strings.Fields(l)
		pkg, test, action := f[0], f[1], f[2]
		if test == "-" {
			test = ""
		}
		switch action {
		case "build-fail":
			b.WriteString(`{"ImportPath":"` + pkg + ` [` + pkg + `.test]","Action":"build-output","Output":"x.go:1: undefined: refreshed\n"}` + "\n")
			b.WriteString(`{"ImportPath":"` + pkg + ` [` + pkg + `.test]","Action":"build-fail"}` + "\n")
			b.WriteString(`{"Action":"fail","Package":"` + pkg + `","FailedBuild":"` + pkg + ` [` + pkg + `.test]"}` + "\n")
			continue
		case "fail":
			if test != "" {
				b.WriteString(`{"Action":"output","Package":"` + pkg + `","Test":"` + test + `","Output":"    ` + test + ` said why\n"}` + "\n")
			}
		}
		b.WriteString(`{"Action":"` + action + `","Package":"` + pkg + `","Test":"` + test + `"}` + "\n")
	}
	return b.String()
}

func TestResultFromEvents(t *testing.T) {
	regression := []string{"TestHoldfastA", "TestHoldfastB"}
	tests := []struct {
		name         string
		stream       string
		state        State
		upstreamPass bool
		output       string
	}{
		{
			name: "all pass",
			stream: events("m/util TestHoldfastA pass", "m/util TestHoldfastB pass", "m/util TestUpstream pass",
				"m/util TestUpstream/sub pass", "m/util - pass", "m/lib TestLib pass", "m/lib - pass"),
			state: Green, upstreamPass: true,
		},
		{
			name:   "regression red, upstream green",
			stream: events("m/util TestHoldfastA fail", "m/util TestHoldfastB pass", "m/util TestUpstream pass", "m/util - fail"),
			state:  Red, upstreamPass: true, output: "TestHoldfastA said why",
		},
		{
			name:   "upstream test fails",
			stream: events("m/util TestHoldfastA pass", "m/util TestHoldfastB pass", "m/util TestUpstream fail", "m/util - fail"),
			state:  Green, upstreamPass: false, output: "TestUpstream said why",
		},
		{
			name:   "a subtest failure counts against its parent only",
			stream: events("m/util TestHoldfastA pass", "m/util TestHoldfastB pass", "m/util TestUpstream/sub fail", "m/util TestUpstream fail", "m/util - fail"),
			state:  Green, upstreamPass: false,
		},
		{
			name:   "does not build",
			stream: events("m/util - build-fail"),
			state:  Broken, upstreamPass: false, output: "undefined: refreshed",
		},
		{
			name:   "a regression test is missing",
			stream: events("m/util TestHoldfastA pass", "m/util - pass"),
			state:  Broken, upstreamPass: true,
		},
		{
			name:   "skipped counts as ran",
			stream: events("m/util TestHoldfastA pass", "m/util TestHoldfastB skip", "m/util - pass"),
			state:  Green, upstreamPass: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := parse(strings.NewReader(tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			state, _ := regressionState(run, regression)
			if state != tc.state {
				t.Errorf("state %s, want %s", state, tc.state)
			}
			pass := len(run.FailedTests(regression)) == 0 && len(run.BuildFailed) == 0
			if pass != tc.upstreamPass {
				t.Errorf("upstream pass %v, want %v (failed %q, build %q)", pass, tc.upstreamPass, run.FailedTests(regression), run.BuildFailed)
			}
			if out := strings.Join(run.Output, "\n"); !strings.Contains(out, tc.output) {
				t.Errorf("output %q lacks %q", out, tc.output)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	withTests := Plan{RegressionTests: []string{"TestX"}}
	tests := []struct {
		name     string
		r        Result
		ok       bool
		notNeed  bool
		contains string
	}{
		{"red then green", Result{Plan: withTests, Pristine: Red, Patched: Green, UpstreamPass: true}, true, false, "ok"},
		{"upstream fixed it", Result{Plan: withTests, Pristine: Green, Patched: Green, UpstreamPass: true}, false, true, "patch no longer needed"},
		{"patch does not fix it", Result{Plan: withTests, Pristine: Red, Patched: Red, UpstreamPass: true}, false, false, "not green on the patched tree"},
		{"upstream tests fail", Result{Plan: withTests, Pristine: Red, Patched: Green}, false, false, "upstream tests"},
		{"pristine broken", Result{Plan: withTests, Pristine: Broken, Patched: Green, UpstreamPass: true}, false, false, "could not be run on the pristine"},
		{"no regression tests", Result{Pristine: NoTests, Patched: NoTests, UpstreamPass: true}, true, false, "ok"},
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
