package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/scale"
	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

// A report written before a change of the targets' rules is judged again
// by the rules of now: here its stale verdict says met, and the one
// on-time run it holds does not meet the recovery bound.
func TestRejudgesAndRenders(t *testing.T) {
	dir := t.TempDir()
	r := &scale.Report{StatusPeriod: 10 * time.Second, Ks: []int{100}}
	r.Runs = []scale.Run{{K: 100, Storm: scale.OnTime, Variant: scale.Patched,
		Recovery: scale.Summary{Members: 100, Recovered: 100, P50: 20 * time.Second, P99: 27 * time.Second, Max: 27 * time.Second}}}
	r.Verdicts = []scale.Verdict{{Target: "patched: p99 recovery ≤ one status period + 2 s", Met: true, Detail: "stale"}}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-dir", dir}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| patched: p99 recovery ≤ one status period + 2 s | **missed** | K = 100"; !strings.Contains(string(md), want) {
		t.Errorf("scale.md not judged again: lacks %q\n%s", want, md)
	}
	// The charts are drawn again too, from the same figures.
	svg, err := os.ReadFile(filepath.Join(dir, scale.P99Chart))
	if err != nil {
		t.Fatal(err)
	}
	marks, err := svgchart.Marks(svg)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].Data["k"] != "100" || marks[0].Data["p99-ms"] != "27000" {
		t.Errorf("%s marks = %+v, want patched's K = 100 at 27000 ms", scale.P99Chart, marks)
	}
	if !strings.Contains(string(md), "]("+scale.P99Chart+")") {
		t.Errorf("scale.md does not link %s", scale.P99Chart)
	}
	back, err := scale.ReadReport(filepath.Join(dir, "scale.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Verdicts) < 2 || back.Verdicts[0].Detail == "stale" {
		t.Errorf("scale.json keeps the stale verdicts: %+v", back.Verdicts)
	}
}

// Nothing to render is an error naming the file, and writes nothing.
func TestMissingReport(t *testing.T) {
	dir := t.TempDir()
	err := run([]string{"-dir", dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "scale.json")) || !strings.Contains(err.Error(), "make scale") {
		t.Fatalf("run = %v, want an error naming the missing scale.json and how to make one", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed render left %d files", len(entries))
	}
}

// A scale.json that is not a report is refused before anything is
// written: the old scale.md stays.
func TestBadReportLosesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scale.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scale.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-dir", dir}); err == nil || !strings.Contains(err.Error(), "scale.json") {
		t.Fatalf("run = %v, want an error naming scale.json", err)
	}
	if md, _ := os.ReadFile(filepath.Join(dir, "scale.md")); string(md) != "old" {
		t.Errorf("scale.md = %q, want it untouched", md)
	}
}
