package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// DefaultReports is where `holdfast test` writes its Markdown and JSON
// reports; _output/ is ignored by git.
const DefaultReports = "_output/reports"

// errTestFailed is returned, after the report is printed, when a pin is
// not as it must be.
var errTestFailed = errors.New("tests failed")

// runTest applies (idempotently) and tests one pin, or every pin with
// --all, and prints the RED/GREEN report.
func runTest(ctx context.Context, e *env, args []string) error {
	fs := e.flags("test")
	name := fs.String("upstream", "", "upstream name from pins.txt")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin)")
	all := fs.Bool("all", false, "every pinned version of the upstream")
	reports := fs.String("reports", "", "folder for the Markdown and JSON reports (default: <root>/"+DefaultReports+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	up, selected, err := e.selectPins(*name, *version, *all)
	if err != nil {
		return err
	}
	if *reports == "" {
		*reports = filepath.Join(e.root, DefaultReports)
	}
	source, err := build.ReadSource(ctx, e.root)
	if err != nil {
		return err
	}
	c := e.config("")
	runner := treetest.Runner{Log: e.stderr, Toolchain: build.Toolchain}
	var results []*treetest.Result
	for _, pin := range selected {
		r, err := treetest.Check(ctx, c, runner, up, pin)
		if err != nil {
			return err
		}
		r.HoldfastCommit, r.HoldfastTreeState = source.Commit, source.TreeState
		results = append(results, r)
	}
	if err := treetest.WriteText(e.stdout, results); err != nil {
		return err
	}
	reportName := "test-" + up.Name
	if !*all {
		reportName += "-" + selected[0].Version
	}
	written, err := treetest.SaveReports(*reports, reportName, results)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "reports: %s\n", written)
	failed, notNeeded := 0, 0
	for _, r := range results {
		if !r.OK() {
			failed++
		}
		if r.PatchNoLongerNeeded() {
			notNeeded++
		}
	}
	switch {
	case notNeeded > 0:
		return fmt.Errorf("%w: %d of %d pins: patch no longer needed on %d (upstream fixed it; see the report)", errTestFailed, failed, len(results), notNeeded)
	case failed > 0:
		return fmt.Errorf("%w: %d of %d pins", errTestFailed, failed, len(results))
	}
	return nil
}

// selectPins resolves --upstream, --version and --all.
func (e *env) selectPins(name, version string, all bool) (*pins.Upstream, []pins.Pin, error) {
	if all && version != "" {
		return nil, nil, fmt.Errorf("%w: --all and --version exclude each other", errUsage)
	}
	_, up, err := e.upstream(name)
	if err != nil {
		return nil, nil, err
	}
	if all {
		return up, up.Pins, nil
	}
	pin, err := up.Pin(version)
	if err != nil {
		return nil, nil, err
	}
	return up, []pins.Pin{pin}, nil
}
