package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// RequiredSuites are the end-to-end suites a release must carry: for the
// Karmada fixes the suite on a real Karmada control plane, for the
// worker's the failover and own-credential suites.
var RequiredSuites = []string{"karmada-control-plane", "worker-hub-failover", "worker-own-credential"}

// RequiredScenarios are scenarios a suite must hold a patched row of: the
// control-plane suite is the only end-to-end proof of each shipped Karmada
// binary (karmada-search and karmada-metrics-adapter included), so a
// report of a partial run (E2E_RUN) that left one out is refused.
var RequiredScenarios = map[string][]string{
	"karmada-control-plane": {"propagation", "rotation", "late-secret", "repeated-rotation", "two-members", "search", "metrics", "own-credential"},
}

// readE2E returns the end-to-end report's Markdown after checking that it
// is of this commit, holds every required suite, and that every scenario
// ended as the suite expected (pristine red, patched green).
func readE2E(o Options) (string, error) {
	jsonPath := filepath.Join(o.Inputs.Reports, "e2e.json")
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		return "", refuse("no end-to-end report (%v): run `make e2e`", err)
	}
	var r e2ereport.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return "", refuse("%s: %v", jsonPath, err)
	}
	if r.HoldfastCommit != o.Source.Commit || r.HoldfastTreeState != "clean" {
		return "", refuse("%s was written at holdfast commit %q (tree %s), not %s: run `make e2e` again",
			jsonPath, r.HoldfastCommit, r.HoldfastTreeState, o.Source.Commit)
	}
	have := map[string]int{}
	patched := map[string]bool{}
	for _, s := range r.Suites {
		have[s.Suite] = len(s.Scenarios)
		for _, sc := range s.Scenarios {
			if sc.Binary == "patched" {
				patched[s.Suite+"/"+sc.Name] = true
			}
		}
	}
	for _, want := range RequiredSuites {
		if have[want] == 0 {
			return "", refuse("%s has no scenario of suite %s: run the whole `make e2e`", jsonPath, want)
		}
		for _, name := range RequiredScenarios[want] {
			if !patched[want+"/"+name] {
				return "", refuse("%s has no patched row of %s/%s: run the whole `make e2e`", jsonPath, want, name)
			}
		}
	}
	if unmet := r.Unmet(); len(unmet) > 0 {
		var names []string
		for _, s := range unmet {
			names = append(names, fmt.Sprintf("%s/%s (%s: %s, expected %s)", s.Suite, s.Name, s.Binary, s.Result, s.Expected))
		}
		return "", refuse("end-to-end scenarios did not end as expected: %s", strings.Join(names, "; "))
	}
	if _, err := os.Stat(filepath.Join(o.Inputs.Reports, "e2e.md")); err != nil {
		return "", refuse("no end-to-end report (%v): run `make e2e`", err)
	}
	return summary(r), nil
}

// summary is the release notes' end-to-end table: one line a scenario;
// the full report with its evidence is reports/e2e.md.
func summary(r e2ereport.Report) string {
	var b strings.Builder
	b.WriteString("Every scenario ended as expected (pristine builds red, patched green, pristine controls green). Evidence, timings and stand-ins: `reports/e2e.md`.\n\n")
	b.WriteString("| suite | scenario | binary | result |\n|---|---|---|---|\n")
	for _, s := range r.Suites {
		for _, sc := range s.Scenarios {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Suite, cell(sc.Name), sc.Binary, sc.Result)
		}
	}
	return b.String()
}
