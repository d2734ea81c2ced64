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
		why          string
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
			// A test that skips exercised nothing: RED on pristine and a
			// skip on patched must not read as GREEN.
			name:   "a skipped regression test is broken, named",
			stream: events("m/util TestHoldfastA pass", "m/util TestHoldfastB skip", "m/util - pass"),
			state:  Broken, upstreamPass: true, why: "skipped (a skipped test exercises nothing): TestHoldfastB",
		},
		{
			name:   "a skip on pristine is not red",
			stream: events("m/util TestHoldfastA fail", "m/util TestHoldfastB skip", "m/util - fail"),
			state:  Broken, upstreamPass: true, why: "TestHoldfastB",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := parse(strings.NewReader(tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			state, why := regressionState(run, regression)
			if state != tc.state {
				t.Errorf("state %s, want %s", state, tc.state)
			}
			if !strings.Contains(strings.Join(why, "; "), tc.why) {
				t.Errorf("why %q lacks %q", why, tc.why)
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

// TestVerdictWithoutRegressionTests: a renamed or missing tests/<upstream>/
// reads NONE on both trees. Nothing was shown, so the verdict is not ok.
func TestVerdictWithoutRegressionTests(t *testing.T) {
	r := Result{Pristine: NoTests, Patched: NoTests, UpstreamPass: true}
	if r.OK() {
		t.Errorf("OK() = true for a report with no regression test (verdict %q)", r.Verdict())
	}
	if v := r.Verdict(); !strings.HasPrefix(v, "FAIL") {
		t.Errorf("Verdict() = %q, want a FAIL", v)
	}
}
