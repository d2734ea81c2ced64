package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
)

// DefaultPristineBin is where `make upstream-go-twins` builds the released
// twins (upstream's release, its own dependency versions) with the Go
// upstream's go line implies (build.UpstreamGo), apart
// from the e2e suites' twins in _output/bin, which build.Toolchain
// compiles.
const DefaultPristineBin = "_output/bin-upstream-go"

// ScanVulnerabilities is the Options.Vulnerabilities `holdfast release` uses:
// govulncheck's report into the release folder, the gate, the OpenVEX
// document that sign attaches to every image, and the notes' side-by-side
// table of each shipped binary's released twin (in pristineBin, as
// `holdfast build --released --bin pristineBin` leaves it) next to it. One
// function, so the signed release test attaches what a real release
// attaches.
func ScanVulnerabilities(root, version string, shipped []Shipped, pristineBin string) func(ctx context.Context, stage string, bins []vulnreport.Binary) (string, error) {
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
		table, err := sideBySide(ctx, root, shipped, pristineBin, r)
		if err != nil {
			return "", err
		}
		gate := vulnreport.GateMarkdown(r.Gate(func(m, id string) (string, bool) { return Waiver(shipped, m, id) }))
		return r.Markdown() + "\n" + gate + "\n" + table, nil
	}
}

// sideBySide scans the pristine twins of the shipped binaries and renders
// the table. A missing twin refuses the release: the notes promise the
// table.
func sideBySide(ctx context.Context, root string, shipped []Shipped, pristineBin string, holdfast *vulnreport.Report) (string, error) {
	var bins []vulnreport.Binary
	var notes []string
	for _, sh := range shipped {
		var paths []string
		for _, pkg := range sh.Upstream.Build {
			p := filepath.Join(pristineBin, pipeline.TreeDir(sh.Upstream, sh.Pin.Version, provenance.Released), sh.Upstream.BinaryName(pkg))
			if _, err := os.Stat(p); err != nil {
				return "", refuse("the side-by-side table needs the pristine twin of %s %s: %v (holdfast build --upstream %s --version %s --released --toolchain upstream --bin %s)",
					sh.Upstream.Name, sh.Pin.Version, err, sh.Upstream.Name, sh.Pin.Version, pristineBin)
			}
			paths = append(paths, p)
			bins = append(bins, vulnreport.Binary{Path: p, MainVersion: sh.Pin.Version})
		}
		note, err := build.PristineGoNote(sh.Upstream.Name, sh.Upstream.Module, sh.Pin.Version, paths)
		if err != nil {
			return "", err
		}
		notes = append(notes, note)
	}
	pristine, err := vulnreport.Scan(ctx, root, bins)
	if err != nil {
		return "", fmt.Errorf("scanning the pristine twins: %w", err)
	}
	cs, err := vulnreport.Compare(pristine, holdfast)
	if err != nil {
		return "", err
	}
	return vulnreport.SideBySideMarkdown(cs, strings.Join(notes, "\n")), nil
}
