package main

import (
	"context"
	"fmt"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// runApply builds the patched tree and its pristine twin for one pin, or
// for every pin of the upstream with --all.
func runApply(ctx context.Context, e *env, args []string) error {
	fs := e.flags("apply")
	name := fs.String("upstream", "", "upstream name from pins.txt")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin)")
	all := fs.Bool("all", false, "every pinned version of the upstream")
	out := fs.String("out", "", "folder for the trees (default: <root>/_output/trees)")
	patchedOnly := fs.Bool("patched-only", false, "skip the pristine twin")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *all && *version != "" {
		return fmt.Errorf("%w: --all and --version exclude each other", errUsage)
	}
	_, up, err := e.upstream(*name)
	if err != nil {
		return err
	}
	selected := up.Pins
	if !*all {
		pin, err := up.Pin(*version)
		if err != nil {
			return err
		}
		selected = []pins.Pin{pin}
	}
	kinds := []provenance.Kind{provenance.Patched, provenance.Pristine}
	if *patchedOnly {
		kinds = kinds[:1]
	}
	c := e.config(*out)
	for _, pin := range selected {
		for _, kind := range kinds {
			tree, err := c.Build(ctx, up, pin, kind)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, tree.Dir)
		}
	}
	return nil
}
