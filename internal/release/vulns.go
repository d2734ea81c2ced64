package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/vulnreport"
)

// ScanVulnerabilities is the Options.Vulnerabilities `holdfast release` uses:
// govulncheck's report into the release folder, the gate, and the OpenVEX
// document that sign attaches to every image. One function, so the signed
// release test attaches what a real release attaches.
func ScanVulnerabilities(root, version string, shipped []Shipped) func(ctx context.Context, stage string, bins []vulnreport.Binary) (string, error) {
	return func(ctx context.Context, stage string, bins []vulnreport.Binary) (string, error) {
		r, err := vulnreport.WriteReport(ctx, root, stage, bins)
		if err != nil {
			return "", err
		}
		// The gate: no shipped binary may carry a reachable advisory
		// that has a fix, unless its series waives it with a reason.
		if fixable := r.FixableReachable(func(m, id string) bool { return Waived(shipped, m, id) }); len(fixable) > 0 {
			return "", fmt.Errorf("%w: %w", ErrRefused, vulnreport.GateError(fixable))
		}
		// What remains (no fix, waived, or not reachable) is stated
		// in OpenVEX beside the report, named by CHECKSUMS.
		vex, err := r.VEX("https://github.com/holdfast-dist/holdfast/releases/tag/"+version+"#openvex",
			func(m, id string) (string, bool) { return Waiver(shipped, m, id) })
		if err != nil {
			return "", err
		}
		path := filepath.Join(stage, vulnreport.FolderName, vulnreport.VEXFile)
		if err := os.WriteFile(path, vex, 0o644); err != nil {
			return "", fmt.Errorf("writing the OpenVEX document %s: %w", path, err)
		}
		return r.Markdown(), nil
	}
}
