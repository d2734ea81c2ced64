package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// readE2E returns the end-to-end report's Markdown after checking that it
// is of this commit, holds every required suite, and that every scenario
// ended as e2ereport.Catalog requires (pristine red, patched green, pristine
// controls green), whatever expectation the report's rows carry.
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
	// Every scenario the suites define, patched and pristine, by name
	// (e2ereport.Catalog, which the suites' recorder enforces): a partial
	// run (E2E_RUN) replaces a suite's rows with the few it ran.
	if missing := r.Missing(); len(missing) > 0 {
		return "", refuse("%s has no row of %d required scenarios: %s: run the whole `make e2e`", jsonPath, len(missing), strings.Join(missing, "; "))
	}
	if unmet := r.Unmet(); len(unmet) > 0 {
		var names []string
		for _, s := range unmet {
			names = append(names, fmt.Sprintf("%s/%s (%s: %s)", s.Suite, s.Name, s.Binary, s.Shortfall()))
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
