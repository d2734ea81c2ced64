package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-report:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("e2e-report", flag.ContinueOnError)
	root := fs.String("root", "", "repository root (default: found from the working directory)")
	strict := fs.Bool("strict", false, "exit 1 when a scenario did not show the expected result (a skipped one included) or a scenario of e2ereport.Catalog has no row")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		r, err := toolcache.Root()
		if err != nil {
			return err
		}
		*root = r
	}
	in := filepath.Join(*root, e2ereport.Dir)
	out := filepath.Dir(in) // _output/reports

	rep, err := e2ereport.Merge(in)
	if err != nil {
		return err
	}
	source, err := build.ReadSource(context.Background(), *root)
	if err != nil {
		return err
	}
	rep.HoldfastCommit, rep.HoldfastTreeState = source.Commit, source.TreeState
	data, err := rep.JSON()
	if err != nil {
		return err
	}
	mdPath, jsonPath := filepath.Join(out, "e2e.md"), filepath.Join(out, "e2e.json")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeTimelines(out, rep); err != nil {
		return err
	}
	if err := os.WriteFile(mdPath, rep.Markdown(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
		return err
	}

	unmet := rep.Unmet()
	fmt.Printf("e2e report: %d suites, %d scenarios not as expected: %s\n", len(rep.Suites), len(unmet), mdPath)
	for _, s := range unmet {
		fmt.Printf("  %s / %s (%s): %s\n", s.Suite, s.Name, s.Binary, s.Shortfall())
	}
	missing := rep.Missing()
	if len(missing) > 0 {
		fmt.Printf("%d scenarios the suites define have no row (a partial run? the release refuses it):\n", len(missing))
		for _, m := range missing {
			fmt.Printf("  %s\n", m)
		}
	}
	if *strict && len(unmet)+len(missing) > 0 {
		return fmt.Errorf("%d scenarios did not show the expected result (skipped included), %d have no row", len(unmet), len(missing))
	}
	return nil
}

// writeTimelines writes the rotation scenarios' timings SVGs e2e.md links,
// after removing those of the previous report: a scenario renamed or gone
// would otherwise leave its old picture beside the new e2e.md.
func writeTimelines(out string, rep e2ereport.Report) error {
	old, err := filepath.Glob(filepath.Join(out, e2ereport.TimelinePrefix+"*.svg"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	for _, t := range rep.Timelines() {
		svg, err := t.SVG()
		if err != nil {
			return fmt.Errorf("drawing the timings of %s / %s: %w", t.Suite, t.Scenario, err)
		}
		if err := os.WriteFile(filepath.Join(out, t.File), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}
