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
