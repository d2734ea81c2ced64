package vulnreport

import (
	"fmt"
	"strings"
)

// FixableReachable lists the findings the release gate refuses: a
// vulnerable function in a binary (reachable) of a module, the standard
// library included, at a version with a fix, that waived does not excuse
// for the binary's main module (the upstream whose series carries the
// waiver). An advisory without a fix, or only imported or required, is
// left to the VEX.
func (r *Report) FixableReachable(waived func(mainModule, id string) bool) []string {
	var out []string
	for _, b := range r.Binaries {
		for _, f := range b.Findings {
			if f.Reach != Reachable || f.Fixed == "" || waived(b.MainModule, f.OSV) {
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s in %s %s (fixed in %s)", b.Name, f.OSV, f.Module, f.Version, f.Fixed))
		}
	}
	return out
}

// GateError is the refusal's text: every finding, and what to do.
func GateError(findings []string) error {
	return fmt.Errorf("%d reachable advisories with a fix: override the module in the series' overrides file, or waive the advisory there with a reason (docs/pipeline.md, \"Dependency overrides\"):\n  %s",
		len(findings), strings.Join(findings, "\n  "))
}

// GateRows are one binary's reachable advisories as the release gate
// reads them: with a fix and not waived (the gate refuses each; target
// none), without a fix, and waived with the series' reason.
type GateRows struct {
	Binary  string
	Fixable []string
	NoFix   []string
	Waived  []string // "ID: reason"
}

// Gate sorts each binary's reachable advisories into GateRows; waived
// returns a series' reason for an advisory of the binary's main module.
func (r *Report) Gate(waived func(mainModule, id string) (string, bool)) []GateRows {
	var out []GateRows
	for _, b := range r.Binaries {
		g := GateRows{Binary: b.Name}
		seen := map[string]bool{}
		for _, f := range b.Findings {
			if f.Reach != Reachable || seen[f.OSV] {
				continue
			}
			seen[f.OSV] = true
			why, ok := waived(b.MainModule, f.OSV)
			switch {
			case f.Fixed == "":
				g.NoFix = append(g.NoFix, f.OSV)
			case ok:
				g.Waived = append(g.Waived, f.OSV+": "+why)
			default:
				g.Fixable = append(g.Fixable, fmt.Sprintf("%s (%s %s, fixed in %s)", f.OSV, f.Module, f.Version, f.Fixed))
			}
		}
		out = append(out, g)
	}
	return out
}

// String is the binary's line in `holdfast vulns`' output.
func (g GateRows) String() string {
	list := func(ids []string) string {
		if len(ids) == 0 {
			return ""
		}
		return " (" + strings.Join(ids, "; ") + ")"
	}
	return fmt.Sprintf("%s: reachable with a fix %d%s; reachable without a fix %d%s; waived %d%s",
		g.Binary, len(g.Fixable), list(g.Fixable), len(g.NoFix), list(g.NoFix), len(g.Waived), list(g.Waived))
}

// GateMarkdown is the release notes' table of GateRows.
func GateMarkdown(rows []GateRows) string {
	var b strings.Builder
	b.WriteString("| binary | reachable with a fix (target 0) | reachable without a fix | waived, with reason |\n|---|---|---|---|\n")
	cellOf := func(ids []string) string {
		if len(ids) == 0 {
			return "0"
		}
		return fmt.Sprintf("%d: %s", len(ids), cell(strings.Join(ids, "; ")))
	}
	for _, g := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.Binary, cellOf(g.Fixable), cellOf(g.NoFix), cellOf(g.Waived))
	}
	return b.String()
}
