package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// runCharts packages the Helm charts of the default pins (`charts build`)
// or pushes them to an OCI registry (`charts push`); see docs/charts.md.
func runCharts(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want `charts build` or `charts push`", errUsage)
	}
	switch args[0] {
	case "build":
		return runChartsBuild(ctx, e, args[1:])
	case "push":
		return runChartsPush(ctx, e, args[1:])
	default:
		return unknownSub("charts", args[0], "build", "push")
	}
}

func runChartsBuild(ctx context.Context, e *env, args []string) error {
	fs := e.flags("charts build")
	out := fs.String("out", "", "folder for the chart archives, replaced whole (default: <root>/"+charts.DefaultOut+")")
	helmPath := fs.String("helm", "", "helm binary (default: helm "+toolcache.Helm.Version+", built once into <root>/"+toolcache.CacheDir+")")
	images := fs.String("images", "", "folder `images build` wrote to; the charts default to those images' digests, or keep tags when none is there (default: <root>/"+imagebuild.DefaultOut+")")
	tags := fs.Bool("tags", false, "keep the image tags, whatever images are built")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *tags && *images != "" {
		return fmt.Errorf("%w: --tags and --images exclude each other", errUsage)
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	helm, err := e.helm(ctx, *helmPath)
	if err != nil {
		return err
	}
	imagesDir := defaultUnder(e.root, *images, imagebuild.DefaultOut)
	if *tags {
		imagesDir = ""
	}
	// The archives' entries carry the time the binaries carry: the same
	// inputs give the same bytes.
	source, err := build.ReadSource(ctx, e.root)
	if err != nil {
		return err
	}
	pkgs, err := charts.Build(ctx, charts.Options{
		Pins: f, Trees: e.config(""), Out: e.chartsOut(*out), Helm: helm, Images: imagesDir, ModTime: source.Date, Log: e.stderr,
	})
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		fmt.Fprintln(e.stdout, p.Path)
	}
	return nil
}

func runChartsPush(ctx context.Context, e *env, args []string) error {
	fs := e.flags("charts push")
	registry := fs.String("registry", "", "OCI repository prefix, e.g. oci://ghcr.io/holdfast-dist/charts (required)")
	plainHTTP := fs.Bool("plain-http", false, "talk plain HTTP to the registry (a local test registry)")
	out := fs.String("out", "", "folder holding the chart archives (default: <root>/"+charts.DefaultOut+")")
	helmPath := fs.String("helm", "", "helm binary (default: helm "+toolcache.Helm.Version+", built once into <root>/"+toolcache.CacheDir+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *registry == "" {
		return fmt.Errorf("%w: --registry is required", errUsage)
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	// Inputs first: helm may have to be built (minutes on a cold cache).
	if _, err := charts.CheckPush(f, e.chartsOut(*out), *registry); err != nil {
		return err
	}
	helm, err := e.helm(ctx, *helmPath)
	if err != nil {
		return err
	}
	pushed, err := charts.Push(ctx, helm, f, e.chartsOut(*out), *registry, *plainHTTP)
	for _, p := range pushed {
		fmt.Fprintf(e.stdout, "pushed %s@%s\n", p.Ref, p.Digest)
	}
	return err
}

func (e *env) chartsOut(out string) string {
	if out == "" {
		return filepath.Join(e.root, charts.DefaultOut)
	}
	return out
}

// helm is the given binary, else the pinned helm, built on first use. helm
// runs with holdfast's environment, so `helm registry login` credentials
// reach `charts push`.
func (e *env) helm(ctx context.Context, path string) (charts.Helm, error) {
	if path != "" {
		return charts.Helm{Path: path}, nil
	}
	root, err := filepath.Abs(e.root)
	if err != nil {
		return charts.Helm{}, err
	}
	path, err = toolcache.Ensure(ctx, root, toolcache.Helm)
	if err != nil {
		return charts.Helm{}, err
	}
	return charts.Helm{Path: path}, nil
}
