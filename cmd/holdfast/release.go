package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/build"
	"github.com/holdfast-dist/holdfast/internal/charts"
	"github.com/holdfast-dist/holdfast/internal/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pins"
	"github.com/holdfast-dist/holdfast/internal/release"
)

// runRelease assembles the release folder from what `make release`'s
// earlier steps wrote; it refuses a dirty checkout, a failing report or an
// artifact of another commit (internal/release).
func runRelease(ctx context.Context, e *env, args []string) error {
	fs := e.flags("release")
	version := fs.String("version", "", "release version, vX.Y.Z[-pre]")
	out := fs.String("out", "", "folder receiving VERSION/ (default: <root>/"+release.DefaultOut+")")
	preflight := fs.Bool("preflight", false, "only check what needs no artifact (version, clean checkout, free destination)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *version == "" {
		return fmt.Errorf("%w: --version is required", errUsage)
	}
	if *out == "" {
		*out = filepath.Join(e.root, release.DefaultOut)
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	shipped, err := release.LoadShipped(e.root, f)
	if err != nil {
		return err
	}
	source, err := build.ReadSource(ctx, e.root)
	if err != nil {
		return err
	}
	dir, err := release.Assemble(ctx, release.Options{
		Version: *version, Source: source, Shipped: shipped,
		Inputs: release.DefaultInputs(e.root), Out: *out, Log: e.stderr,
		Checks: releaseChecks(e.root, f, shipped, source), Preflight: *preflight,
	})
	if err != nil {
		return err
	}
	if *preflight {
		fmt.Fprintf(e.stdout, "release %s: preflight ok (%s is free, checkout clean at %s)\n", *version, dir, source.ShortCommit)
		return nil
	}
	fmt.Fprintf(e.stdout, "release %s written to %s (verify: cd %s && sha256sum -c %s)\n", *version, dir, dir, release.ChecksumsFile)
	return nil
}

// releaseChecks are the artifact gates beyond the reports: the charts and
// images of exactly these pins must be there, and the charts must pull those
// images by digest.
func releaseChecks(root string, f *pins.File, shipped []release.Shipped, source build.Source) []func() error {
	inputs := release.DefaultInputs(root)
	return []func() error{
		func() error {
			want, err := charts.Expected(f, inputs.Charts)
			if err != nil {
				return err
			}
			for _, p := range want {
				if _, err := os.Stat(p.Path); err != nil {
					return fmt.Errorf("chart %s %s is missing (%v): run `make charts`", p.Chart.Name, p.Version, err)
				}
			}
			return nil
		},
		func() error {
			for _, s := range shipped {
				if err := imagebuild.Verify(inputs.Images, s.Upstream, s.Pin.Version, source.Commit, build.DefaultPlatforms); err != nil {
					return err
				}
			}
			return nil
		},
		// After the images gate: the digests compared are of images of this
		// commit.
		func() error { return charts.VerifyDigests(f, inputs.Charts, inputs.Images) },
	}
}
