package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// runBuild applies the series (idempotently) and builds the pin's binaries
// with provenance, for one pin or every pin with --all.
func runBuild(ctx context.Context, e *env, args []string) error {
	fs := e.flags("build")
	name := fs.String("upstream", "", "upstream name from pins.txt")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin)")
	all := fs.Bool("all", false, "every pinned version of the upstream")
	pristine := fs.Bool("pristine", false, "build the pristine twin (upstream's code on the series' dependency versions) into NAME-VERSION-pristine")
	released := fs.Bool("released", false, "build upstream's release as published, its own dependency versions, into NAME-VERSION-released")
	only := fs.String("only", "", "comma-separated binary names to build (default: every build package of the upstream)")
	bin := fs.String("bin", "", "folder for the binaries (default: <root>/"+build.DefaultOut+")")
	toolchain := fs.String("toolchain", "", "with --released: the Go release to compile upstream with (default: "+build.Toolchain+"), or "+build.UpstreamGo+": the one upstream's go line implies (go 1.25.10: go1.25.10), fetched by the go command")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *pristine && *released {
		return fmt.Errorf("%w: --pristine and --released are two different trees: build one at a time", errUsage)
	}
	if *toolchain != "" && !*released {
		// The pristine twin carries the overrides' go line, not upstream's:
		// only a released tree says which Go upstream builds with.
		return fmt.Errorf("%w: --toolchain is for --released: shipped binaries and pristine twins are built with %s", errUsage, build.Toolchain)
	}
	up, selected, err := e.selectPins(*name, *version, *all)
	if err != nil {
		return err
	}
	if *bin == "" {
		*bin = filepath.Join(e.root, build.DefaultOut)
	}
	source, err := build.ReadSource(ctx, e.root)
	if err != nil {
		return err
	}
	kind := provenance.Patched
	switch {
	case *pristine:
		kind = provenance.Pristine
	case *released:
		kind = provenance.Released
	}
	c := e.config("")
	for _, pin := range selected {
		tree, err := c.Build(ctx, up, pin, kind)
		if err != nil {
			return err
		}
		stamp := build.Stamp{Version: tree.Record.HoldfastVersion, SeriesHash: tree.Record.SeriesHash, Source: source}
		name := ""
		if kind != provenance.Patched {
			// Upstream's own version string: upstream's code must not
			// pass for a holdfast build.
			stamp = build.Stamp{Version: pin.Version, Source: source}
			name = pipeline.TreeDir(up, pin.Version, kind)
		}
		bins, err := build.Build(ctx, build.Options{
			Tree: tree.Dir, Upstream: up, Pin: pin, Stamp: stamp, Out: *bin, Name: name, Log: e.stderr,
			Only: splitList(*only), Pristine: kind != provenance.Patched, Toolchain: *toolchain,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s: %s, series %s (%s), holdfast %s (%s), built %s\n", up.Name, pin.Version,
			stamp.Version, build.ShortSeriesHash(stamp.SeriesHash), stamp.SeriesHash, source.ShortCommit, source.TreeState, source.Date.Format("2006-01-02T15:04:05Z"))
		for _, b := range bins {
			fmt.Fprintf(e.stdout, "  %s\n", b.Path)
		}
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
