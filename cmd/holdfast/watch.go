package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/rebase"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/upstreamwatch"
)

// runWatch lists the upstream tags published since the pins, tries the
// series on each as `holdfast rebase` does, and writes one report. Finding
// tags that need work is what the watch is for, so it exits 0 whatever
// their verdicts; it exits 1 only when it could not list or try a tag
// (the report, written anyway, says which).
func runWatch(ctx context.Context, e *env, args []string) error {
	fs := e.flags("watch")
	only := fs.String("upstream", "", "watch only this upstream (default: every upstream in pins.txt)")
	pre := fs.Bool("pre-releases", false, "also try pre-release tags (-rc, -alpha, ...)")
	out := fs.String("out", "", "report folder (default _output/watch): watch.md and watch.json")
	if err := parse(fs, args); err != nil {
		return err
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(e.root, pipeline.DefaultOut, "watch")
	}
	c := e.config("")
	c.Log = nil // the rebase reports say what matters
	check := func(up *pins.Upstream) rebase.PristineCheck {
		return treetest.PristineCheck(treetest.Runner{Toolchain: build.Toolchain}, filepath.Join(e.root, pipeline.TestsDir(up)), featureTests(c, up))
	}
	r, runErr := upstreamwatch.Run(ctx, c, f, upstreamwatch.Options{Only: *only, PreReleases: *pre, PristineCheck: check, Log: e.stderr})
	if r == nil {
		return runErr
	}
	paths, err := r.Save(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(e.stdout, p)
	}
	for _, line := range r.Summary() {
		fmt.Fprintln(e.stdout, line)
	}
	return runErr
}
