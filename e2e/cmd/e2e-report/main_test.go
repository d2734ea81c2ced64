package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

func TestRunWritesMarkdownAndJSON(t *testing.T) {
	root := t.TempDir()
	r := e2ereport.NewRecorder(root, "worker-hub-failover")
	r.Add(e2ereport.Scenario{Name: "failover", Binary: "patched", Result: e2ereport.Fail, Expected: e2ereport.Pass})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}

	if err := run([]string{"-root", root}); err != nil {
		t.Fatalf("run without -strict: %v", err)
	}
	for _, name := range []string{"e2e.md", "e2e.json"} {
		data, err := os.ReadFile(filepath.Join(root, "_output", "reports", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "failover") {
			t.Errorf("%s does not mention the scenario:\n%s", name, data)
		}
	}
	if err := run([]string{"-root", root, "-strict"}); err == nil {
		t.Error("run -strict with an unmet scenario succeeded")
	}
}

// The rotation scenarios' events are drawn beside e2e.md, which links
// them, and the pictures of an older report are removed.
func TestRunWritesTimelines(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "_output", "reports")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, e2ereport.TimelinePrefix+"gone.svg")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2ereport.NewRecorder(root, "karmada-control-plane")
	r.Add(e2ereport.Scenario{Name: "rotation", Binary: "patched", Result: e2ereport.Pass, Expected: e2ereport.Pass,
		Timings: map[string]time.Duration{"restart-to-recovered": 2345 * time.Millisecond},
		Events:  []e2ereport.Event{{Name: e2ereport.EventRotation, At: 10 * time.Second}, {Name: e2ereport.EventRecovery, At: 12345 * time.Millisecond}}})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-root", root}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the older report's %s is still there (%v)", stale, err)
	}
	file := e2ereport.TimelinePrefix + "karmada-control-plane-rotation.svg"
	svg, err := os.ReadFile(filepath.Join(out, file))
	if err != nil {
		t.Fatal(err)
	}
	marks, err := svgchart.Marks(svg)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 2 || marks[1].Data["at-ms"] != "12345" || marks[1].Data["since-rotation-ms"] != "2345" || marks[1].Data["label"] != "recovery" {
		t.Errorf("%s marks = %+v, want the rotation and the recovery at 12345 ms, 2345 ms after it", file, marks)
	}
	md, _ := os.ReadFile(filepath.Join(out, "e2e.md"))
	if !strings.Contains(string(md), "]("+file+")") {
		t.Errorf("e2e.md does not link %s:\n%s", file, md)
	}
}

// fullReport records every catalogued scenario as expected.
func fullReport(t *testing.T, root string, change func(*e2ereport.Scenario)) {
	t.Helper()
	for _, suite := range e2ereport.Suites() {
		r := e2ereport.NewRecorder(root, suite)
		for _, p := range e2ereport.Catalog[suite] {
			for _, row := range p.Rows {
				s := e2ereport.Scenario{Name: p.Name, Binary: row.Binary, Result: row.Expected, Expected: row.Expected}
				if change != nil {
					change(&s)
				}
				r.Add(s)
			}
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStrictFailsOnSkippedAndMissingRows(t *testing.T) {
	root := t.TempDir()
	fullReport(t, root, nil)
	if err := run([]string{"-root", root, "-strict"}); err != nil {
		t.Fatalf("a full report as expected: %v", err)
	}

	skipped := t.TempDir()
	fullReport(t, skipped, func(s *e2ereport.Scenario) {
		if s.Name == "search" && s.Binary == "pristine" {
			s.Result = e2ereport.Skipped
		}
	})
	if err := run([]string{"-root", skipped, "-strict"}); err == nil {
		t.Error("run -strict with a skipped scenario succeeded")
	}

	partial := t.TempDir()
	r := e2ereport.NewRecorder(partial, "worker-own-credential")
	r.Add(e2ereport.Scenario{Name: e2ereport.Catalog["worker-own-credential"][0].Name, Binary: "patched", Result: e2ereport.Pass, Expected: e2ereport.Pass})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-root", partial}); err != nil {
		t.Fatalf("a partial run without -strict (make e2e E2E_RUN=...): %v", err)
	}
	err := run([]string{"-root", partial, "-strict"})
	if err == nil || !strings.Contains(err.Error(), "have no row") {
		t.Errorf("run -strict on a partial run = %v, want it to name the rows missing", err)
	}
}

// TestMakeTestIsStrict: the gate CI runs (`make test`) fails on a skipped,
// unmet or missing e2e row; `make e2e` alone stays lenient for partial runs.
func TestMakeTestIsStrict(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is what CI runs: %v", err)
	}
	reportLine := func(target string) string {
		cmd := exec.Command(mk, "-n", target)
		cmd.Dir = filepath.Join("..", "..", "..")
		// What the Makefile says, not what an enclosing make was told: a
		// `make e2e E2E_REPORT_FLAGS=--strict` reaches a child make through
		// MAKEFLAGS.
		for _, kv := range os.Environ() {
			switch k, _, _ := strings.Cut(kv, "="); k {
			case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "E2E_REPORT_FLAGS":
			default:
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make -n %s: %v", target, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "e2e/cmd/e2e-report") {
				return line
			}
		}
		t.Fatalf("make -n %s runs no e2e-report:\n%s", target, out)
		return ""
	}
	if line := reportLine("test"); !strings.Contains(line, "--strict") {
		t.Errorf("make test runs e2e-report without --strict: %s", line)
	}
	if line := reportLine("e2e"); strings.Contains(line, "--strict") {
		t.Errorf("make e2e alone runs e2e-report --strict, so a partial E2E_RUN cannot write its report: %s", line)
	}
}
