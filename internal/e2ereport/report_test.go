package e2ereport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestScenarioJSONRoundTrip(t *testing.T) {
	in := Scenario{
		Suite: "karmada-rotation", Name: "rotate", Binary: "patched",
		Result: Pass, Expected: Pass,
		Duration: 61234 * time.Millisecond,
		Timings:  map[string]time.Duration{"restart-to-recovered": 2345 * time.Millisecond},
		Notes:    []string{"Cluster API served as a CRD"},
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"durationSeconds":61.234`, `"restart-to-recovered":2.345`, `"met":true`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON %s does not contain %s", data, want)
		}
	}
	var out Scenario
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestMet(t *testing.T) {
	for _, tc := range []struct {
		result, expected Result
		met              bool
	}{
		{Pass, Pass, true},
		{RedAsExpected, RedAsExpected, true},
		{Fail, Pass, false},
		// A pristine binary that passes proves the scenario misses the bug.
		{Pass, RedAsExpected, false},
		{Skipped, Pass, false},
	} {
		if got := (Scenario{Result: tc.result, Expected: tc.expected}).Met(); got != tc.met {
			t.Errorf("result %s expected %s: Met = %v, want %v", tc.result, tc.expected, got, tc.met)
		}
	}
}

func TestRedact(t *testing.T) {
	jwt := "eyJhbGciOiJFUzI1NiIsImtpZCI6IiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl"
	for _, tc := range []struct{ in, want string }{
		{"token " + jwt + " rejected", "token <redacted> rejected"},
		{"Authorization: Bearer abcdef0123456789", "Authorization: <redacted>"},
		{"401 Unauthorized from https://127.0.0.1:6443", "401 Unauthorized from https://127.0.0.1:6443"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRecorderFlushAndMerge(t *testing.T) {
	root := t.TempDir()
	karmada := NewRecorder(root, "karmada-rotation")
	worker := NewRecorder(root, "worker-hub-failover")

	// Scenarios may be added from parallel subtests.
	var wg sync.WaitGroup
	for _, b := range []string{"patched", "pristine"} {
		wg.Go(func() {
			exp := Pass
			if b == "pristine" {
				exp = RedAsExpected
			}
			karmada.Add(Scenario{Name: "rotate", Binary: b, Result: exp, Expected: exp,
				Notes: []string{"old token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln revoked"}})
		})
	}
	wg.Wait()
	karmada.SetVersion("kube-apiserver", "v1.35.3")
	karmada.SetVersion("etcd", "v3.6.6")
	worker.Add(Scenario{Name: "failover", Binary: "patched", Result: Fail, Expected: Pass})
	worker.SetVersion("kube-apiserver", "v1.35.4")
	for _, r := range []*Recorder{karmada, worker} {
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if karmada.Path() != filepath.Join(root, "_output", "reports", "e2e", "karmada-rotation.json") {
		t.Errorf("Path = %s", karmada.Path())
	}

	rep, err := Merge(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suites) != 2 || rep.Suites[0].Suite != "karmada-rotation" || rep.Suites[1].Suite != "worker-hub-failover" {
		t.Fatalf("suites = %+v, want karmada-rotation then worker-hub-failover", rep.Suites)
	}
	if n := len(rep.Suites[0].Scenarios); n != 2 {
		t.Errorf("karmada-rotation has %d scenarios, want 2", n)
	}
	for _, sc := range rep.Suites[0].Scenarios {
		if sc.Suite != "karmada-rotation" {
			t.Errorf("scenario suite = %q, want the recorder's", sc.Suite)
		}
		if strings.Contains(strings.Join(sc.Notes, " "), "eyJ") {
			t.Errorf("a token reached the report: %q", sc.Notes)
		}
	}
	if unmet := rep.Unmet(); len(unmet) != 1 || unmet[0].Name != "failover" {
		t.Errorf("Unmet = %+v, want the failover scenario", unmet)
	}
	v := rep.Versions()
	if v["etcd"] != "v3.6.6" {
		t.Errorf("etcd version = %q", v["etcd"])
	}
	if want := "v1.35.3 (karmada-rotation); v1.35.4 (worker-hub-failover)"; v["kube-apiserver"] != want {
		t.Errorf("disagreeing versions = %q, want %q", v["kube-apiserver"], want)
	}

	// The release step reads the merged file back as a Report and refuses
	// one of another commit: the commit must survive the round trip.
	rep.HoldfastCommit, rep.HoldfastTreeState = "0123abc", "clean"
	data, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.HoldfastCommit != "0123abc" || back.HoldfastTreeState != "clean" || len(back.Suites) != 2 {
		t.Errorf("read back: commit %q, tree %q, %d suites; want 0123abc, clean, 2", back.HoldfastCommit, back.HoldfastTreeState, len(back.Suites))
	}
	var doc struct {
		Scenarios, Met int
		Suites         []Suite
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Scenarios != 3 || doc.Met != 2 || len(doc.Suites) != 2 {
		t.Errorf("merged JSON counts: %d scenarios, %d met, %d suites; want 3, 2, 2", doc.Scenarios, doc.Met, len(doc.Suites))
	}
}

func TestFlushReplacesThePreviousReport(t *testing.T) {
	root := t.TempDir()
	r := NewRecorder(root, "s")
	r.Add(Scenario{Name: "one", Result: Pass, Expected: Pass})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	r2 := NewRecorder(root, "s")
	r2.Add(Scenario{Name: "two", Result: Pass, Expected: Pass})
	if err := r2.Flush(); err != nil {
		t.Fatal(err)
	}
	rep, err := Merge(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suites) != 1 || len(rep.Suites[0].Scenarios) != 1 || rep.Suites[0].Scenarios[0].Name != "two" {
		t.Errorf("after two flushes: %+v, want only scenario two", rep.Suites)
	}
	if left, _ := filepath.Glob(filepath.Join(root, Dir, "*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestMergeNamesABrokenFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Merge(dir)
	if err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("Merge of a broken file: err = %v, want one naming broken.json", err)
	}
}

func TestMergeEmptyDir(t *testing.T) {
	rep, err := Merge(filepath.Join(t.TempDir(), "missing"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rep.Markdown()); !strings.Contains(got, "No scenarios ran.") {
		t.Errorf("empty report:\n%s", got)
	}
}

func TestMarkdown(t *testing.T) {
	rep := Report{HoldfastCommit: "0123abc", HoldfastTreeState: "clean", Suites: []Suite{{
		Suite:    "karmada-rotation",
		Finished: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		Versions: Versions{"kube-apiserver": "v1.35.3", "karmada-controller-manager (patched)": "v1.18.2-holdfast.1"},
		Scenarios: []Scenario{
			{Name: "rotate", Binary: "patched", Result: Pass, Expected: Pass, Duration: 61234 * time.Millisecond,
				Timings: map[string]time.Duration{"restart-to-recovered": 1234 * time.Millisecond, "baseline": 250 * time.Millisecond}},
			{Name: "rotate", Binary: "pristine", Result: Pass, Expected: RedAsExpected, Duration: 90 * time.Second,
				Notes: []string{"informer a|b", "saw <redacted>\nsecond line"}},
		},
	}}}
	got := string(rep.Markdown())
	for _, want := range []string{
		"**1 of 2 scenarios did not show the expected result.**",
		"Run at holdfast commit 0123abc (clean checkout).",
		"## karmada-rotation",
		"Finished 2026-12-02 12:00 UTC.",
		"| rotate | patched | pass | pass | yes | 1m1.2s | baseline 250ms<br>restart-to-recovered 1.23s |  |",
		"| rotate | pristine | pass | red-as-expected | **NO** | 1m30s |  | informer a\\|b<br>saw &lt;redacted&gt;<br>second line |",
		"| karmada-controller-manager (patched) | v1.18.2-holdfast.1 |\n| kube-apiserver | v1.35.3 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, got)
		}
	}
	// Every table row has the header's number of cells.
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "| rotate") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 9 {
				t.Errorf("row has %d separators, want 9: %s", n, line)
			}
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1234567 * time.Microsecond, "1.23s"},
		{345678 * time.Microsecond, "346ms"},
		{3*time.Minute + 4567*time.Millisecond, "3m4.6s"},
	} {
		if got := formatDuration(tc.d); got != tc.want {
			t.Errorf("formatDuration(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
