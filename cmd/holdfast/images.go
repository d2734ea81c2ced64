package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// runImages dispatches `holdfast images build|push`.
func runImages(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want `images build` or `images push`", errUsage)
	}
	switch args[0] {
	case "build":
		return runImagesBuild(ctx, e, args[1:])
	case "push":
		return runImagesPush(ctx, e, args[1:])
	}
	return unknownSub("images", args[0], "build", "push")
}

// buildImages is imagebuild.Build, replaced in tests that check what the
// command prints without cross-building an upstream.
var buildImages = imagebuild.Build

// runImagesBuild builds the images of one upstream's pin, or of every
// upstream's default pin.
func runImagesBuild(ctx context.Context, e *env, args []string) error {
	fs := e.flags("images build")
	upstream := fs.String("upstream", "", "upstream name from pins.txt (default: every upstream)")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin; needs --upstream)")
	platforms := fs.String("platforms", platformList(build.DefaultPlatforms), "comma-separated os/arch list")
	only := fs.String("only", "", "comma-separated binary names (default: every binary of the upstream)")
	registry := fs.String("registry", imagebuild.DefaultRegistry, "registry the image references name (does not change digests)")
	out := fs.String("out", "", "folder for the images (default: <root>/"+imagebuild.DefaultOut+")")
	bin := fs.String("bin", "", "folder for the binaries (default: <root>/"+build.DefaultOut+")")
	trees := fs.String("trees", "", "folder for the patched trees (default: <root>/"+pipeline.DefaultOut+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	ps, err := build.ParsePlatforms(*platforms)
	if err != nil {
		return fmt.Errorf("%w: --platforms: %v", errUsage, err)
	}
	targets, err := e.imageTargets(*upstream, *version)
	if err != nil {
		return err
	}
	source, err := build.ReadSource(ctx, e.root)
	if err != nil {
		return err
	}
	o := imagebuild.Options{
		Trees:     e.config(*trees),
		Bin:       defaultUnder(e.root, *bin, build.DefaultOut),
		Out:       defaultUnder(e.root, *out, imagebuild.DefaultOut),
		Registry:  *registry,
		Platforms: ps,
		Source:    source,
		Binaries:  splitList(*only),
		Log:       e.stderr,
	}
	for _, t := range targets {
		built, err := buildImages(ctx, o, t.up, t.pin)
		if err != nil {
			return err
		}
		for _, b := range built {
			fmt.Fprintf(e.stdout, "%s@%s\n  layout %s\n  sbom   %s\n  cdx    %s\n", b.Ref, b.Digest, b.Layout, b.SBOM, b.CycloneDX)
			for _, tb := range b.Tarballs {
				fmt.Fprintf(e.stdout, "  docker load -i %s\n", tb)
			}
		}
	}
	return nil
}

// runImagesPush pushes built images to a registry.
func runImagesPush(ctx context.Context, e *env, args []string) error {
	fs := e.flags("images push")
	upstream := fs.String("upstream", "", "upstream name from pins.txt (default: every upstream)")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin; needs --upstream)")
	only := fs.String("only", "", "comma-separated binary names (default: every binary of the upstream)")
	registry := fs.String("registry", "", "registry and namespace to push to, e.g. ghcr.io/holdfast-dist (required)")
	out := fs.String("out", "", "folder `images build` wrote to (default: <root>/"+imagebuild.DefaultOut+")")
	insecure := fs.Bool("insecure", false, "HTTPS without verifying the registry's certificate")
	plainHTTP := fs.Bool("plain-http", false, "plain HTTP (a registry without TLS)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *registry == "" {
		return fmt.Errorf("%w: --registry is required", errUsage)
	}
	if *insecure && *plainHTTP {
		return fmt.Errorf("%w: --insecure and --plain-http exclude each other", errUsage)
	}
	targets, err := e.imageTargets(*upstream, *version)
	if err != nil {
		return err
	}
	o := imagebuild.PushOptions{
		Out:      defaultUnder(e.root, *out, imagebuild.DefaultOut),
		Registry: *registry,
		Binaries: splitList(*only),
		// The docker CLI's credentials (docker login), then anonymous.
		Remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)},
	}
	if *plainHTTP {
		o.Name = append(o.Name, name.Insecure)
	}
	if *insecure {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		o.Remote = append(o.Remote, remote.WithTransport(t))
	}
	for _, t := range targets {
		pushed, err := imagebuild.Push(ctx, o, t.up, t.pin)
		if err != nil {
			return err
		}
		for _, p := range pushed {
			fmt.Fprintf(e.stdout, "%s@%s\n", p.Ref, p.Digest)
		}
	}
	return nil
}

type imageTarget struct {
	up  *pins.Upstream
	pin pins.Pin
}

// imageTargets resolves --upstream and --version: one pin, or every
// upstream's default pin when no upstream is named.
func (e *env) imageTargets(upstream, version string) ([]imageTarget, error) {
	if upstream == "" {
		if version != "" {
			return nil, fmt.Errorf("%w: --version needs --upstream", errUsage)
		}
		f, err := e.pinFile()
		if err != nil {
			return nil, err
		}
		var targets []imageTarget
		for _, up := range f.Upstreams {
			if _, err := image.SpecFor(up.Name); err != nil {
				return nil, err
			}
			pin, err := up.Pin("")
			if err != nil {
				return nil, err
			}
			targets = append(targets, imageTarget{up, pin})
		}
		return targets, nil
	}
	up, selected, err := e.selectPins(upstream, version, false)
	if err != nil {
		return nil, err
	}
	return []imageTarget{{up, selected[0]}}, nil
}

func platformList(ps []build.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// defaultUnder is flag, or def under root when the flag is empty.
func defaultUnder(root, flag, def string) string {
	if flag != "" {
		return flag
	}
	return filepath.Join(root, def)
}
