package e2ereport

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeTB is a testing.TB whose failures are recorded instead of failing the
// test that runs it, and whose cleanups run when end is called.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	logs            []string
	cleanups        []func()
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Cleanup(fn func())            { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(format string, a ...any) { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }
func (f *fakeTB) Error(a ...any)               { f.failed = true; f.logs = append(f.logs, fmt.Sprint(a...)) }
func (f *fakeTB) Errorf(format string, a ...any) {
	f.failed = true
	f.logs = append(f.logs, fmt.Sprintf(format, a...))
}
func (f *fakeTB) Fatal(a ...any) { f.Error(a...); runtime.Goexit() }
func (f *fakeTB) Failed() bool   { return f.failed }
func (f *fakeTB) Skipped() bool  { return f.skipped }

// run runs body as a test would (Fatal ends it early) and then the cleanups.
func (f *fakeTB) run(body func()) {
	done := make(chan struct{})
	go func() { defer close(done); body() }()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestRunResults(t *testing.T) {
	cases := []struct {
		name     string
		expected Result
		skip     bool
		implied  bool
		body     func(*Run)
		want     Result
		failsT   bool
		wantNote string
	}{
		{name: "outcome as expected", expected: Pass, body: func(r *Run) { r.Outcome(Pass, "GREEN") }, want: Pass, wantNote: "GREEN"},
		{name: "pristine passing is recorded and fails the test", expected: RedAsExpected, body: func(r *Run) { r.Outcome(Pass, "no bug") }, want: Pass, failsT: true},
		{name: "no outcome is a failure", expected: Pass, body: func(r *Run) { r.Notef("looked") }, want: Fail},
		{name: "a failed check overrides an earlier outcome", expected: Pass, body: func(r *Run) { r.Outcome(Pass, "GREEN"); r.Errorf("but then") }, want: Fail, failsT: true, wantNote: "failed: but then"},
		{name: "fatal keeps only the first line in the report", expected: Pass, body: func(r *Run) { r.Fatalf("broke\nsecond line"); r.Outcome(Pass, "unreachable") }, want: Fail, failsT: true, wantNote: "failed: broke"},
		{name: "implied by a passing test", expected: RedAsExpected, implied: true, body: func(r *Run) {}, want: RedAsExpected},
		{name: "implied, but the test failed", expected: Pass, implied: true, body: func(r *Run) { r.t.Error("assertion") }, want: Fail, failsT: true},
		{name: "skipped", expected: Pass, skip: true, body: func(r *Run) {}, want: Skipped},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := NewRecorder(t.TempDir(), "suite")
			f := &fakeTB{TB: t, skipped: c.skip}
			f.run(func() {
				r := rec.Begin(f, Scenario{Name: "s", Binary: "patched", Expected: c.expected})
				if c.implied {
					r.PassWithTest()
				}
				r.Timing("step", 1234567*time.Microsecond)
				c.body(r)
			})
			if rec.Len() != 1 {
				t.Fatalf("%d scenarios recorded, want 1", rec.Len())
			}
			got := rec.scenarios[0]
			if got.Result != c.want {
				t.Errorf("Result = %s, want %s", got.Result, c.want)
			}
			if f.failed != c.failsT {
				t.Errorf("test failed = %v, want %v (log %q)", f.failed, c.failsT, f.logs)
			}
			if got.Timings["step"] != 1235*time.Millisecond {
				t.Errorf("timing = %s, want 1.235s", got.Timings["step"])
			}
			if c.wantNote != "" && !contains(got.Notes, c.wantNote) {
				t.Errorf("notes %q lack %q", got.Notes, c.wantNote)
			}
			for _, n := range got.Notes {
				if strings.Contains(n, "second line") {
					t.Errorf("report note %q has more than the first line", n)
				}
			}
		})
	}
}

func TestRunRedactsNotesAndLogs(t *testing.T) {
	rec := NewRecorder(t.TempDir(), "suite")
	f := &fakeTB{TB: t}
	const token = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
	f.run(func() {
		r := rec.Begin(f, Scenario{Name: "s", Binary: "patched", Expected: Pass})
		r.Notef("Authorization: Bearer %s", token)
		r.Outcome(Pass, "ok")
	})
	for _, s := range append(rec.scenarios[0].Notes, f.logs...) {
		if strings.Contains(s, token) {
			t.Errorf("token in %q", s)
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
