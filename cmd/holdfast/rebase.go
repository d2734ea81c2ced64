package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/rebase"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// errConflict is returned, after the report is printed, when a patch
// conflicts.
var errConflict = errors.New("the series conflicts with this version")

// runRebase tries a series on another upstream version and prints the
// per-patch report; with --update-pins it records the version in the pin
// file when the series applies exactly.
func runRebase(ctx context.Context, e *env, args []string) error {
	fs := e.flags("rebase")
	name := fs.String("upstream", "", "upstream name from pins.txt")
	version := fs.String("version", "", "upstream version to try, e.g. v1.18.3")
	series := fs.String("series", "", "series folder to try (default: that of the same or nearest pinned minor)")
	update := fs.Bool("update-pins", false, "record the version in pins.txt if every patch applies cleanly")
	out := fs.String("out", "", "report folder (default _output/rebase): rebase-NAME-VERSION.txt and .json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *version == "" {
		return fmt.Errorf("%w: --version is required", errUsage)
	}
	_, up, err := e.upstream(*name)
	if err != nil {
		return err
	}
	c := e.config("")
	c.Log = nil // the report says what matters
	check := treetest.PristineCheck(treetest.Runner{Toolchain: build.Toolchain}, filepath.Join(e.root, pipeline.TestsDir(up)), featureTests(c, up))
	r, err := rebase.Run(ctx, c, rebase.Options{Upstream: up, Version: *version, Series: *series, PristineCheck: check, Log: e.stderr})
	if err != nil {
		return err
	}
	if err := r.Write(e.stdout); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(e.root, pipeline.DefaultOut, "rebase")
	}
	// Saved before the verdict decides the exit status: a conflict is the
	// report a script most wants to read.
	written, err := r.Save(dir, "rebase-"+up.Name+"-"+r.Module.Version)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "reports: %s\n", written)
	if r.Count(rebase.Conflict) > 0 {
		return errConflict
	}
	if !*update {
		return nil
	}
	if !r.Clean() {
		return errors.New("pins not updated: every patch must apply cleanly first")
	}
	return updatePins(e, up, pins.Pin{Version: r.Module.Version, Sum: r.Module.Sum, Series: r.Series, Revision: 1})
}

func updatePins(e *env, up *pins.Upstream, pin pins.Pin) error {
	path := filepath.Join(e.root, pins.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, replaced, err := pins.SetPin(path, data, up.Name, pin)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return err
	}
	if replaced != nil {
		fmt.Fprintf(e.stdout, "pins: %s %s replaces %s\n", up.Name, pin.Version, replaced.Version)
	} else {
		fmt.Fprintf(e.stdout, "pins: %s %s added (not the default)\n", up.Name, pin.Version)
	}
	return nil
}

// featureTests are the tests any pinned series of up names as
// Holdfast-Feature-Test: the drop detector leaves them out. A series that
// does not load names none here; the rebase reports why it does not load.
func featureTests(c pipeline.Config, up *pins.Upstream) []string {
	var all [][]*patchset.Patch
	for _, pin := range up.Pins {
		if in, err := c.LoadInputs(up, pin.Series); err == nil {
			all = append(all, in.Series)
		}
	}
	return treetest.FeatureTests(all...)
}
