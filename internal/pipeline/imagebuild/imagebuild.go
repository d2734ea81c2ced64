package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

// DefaultOut is where images go unless told otherwise; _output/ is ignored
// by git.
const DefaultOut = "_output/images"

// DefaultRegistry is the registry and namespace image references name:
// <registry>/<binary>:<holdfast version>, which holdfast's charts point at.
const DefaultRegistry = "ghcr.io/holdfast-dist"

// Options say what to build and where.
type Options struct {
	// Trees builds (or reuses) the patched tree.
	Trees pipeline.Config
	// Bin is the binaries' folder (internal/pipeline/build's Out).
	Bin string
	// Out is the images' folder.
	Out string
	// Registry prefixes the references the layouts and tarballs carry;
	// empty means DefaultRegistry. It does not change the digests.
	Registry string
	// Platforms to build; empty means build.DefaultPlatforms.
	Platforms []build.Platform
	// Source is holdfast's checkout (build.ReadSource).
	Source build.Source
	// Binaries limits the build to these of the upstream's binaries;
	// empty means all of them.
	Binaries []string
	// Env is the go command's environment; nil inherits holdfast's.
	Env []string
	// Log receives one line per step; nil discards.
	Log io.Writer
}

// Built is one image written.
type Built struct {
	Binary string
	Ref    name.Tag
	// Digest is the index's.
	Digest   v1.Hash
	Layout   string
	Tarballs []string
	// SBOM and CycloneDX are the SPDX and CycloneDX documents.
	SBOM, CycloneDX string
}

// Dir is the folder of a pin's images.
func Dir(out string, up *pins.Upstream, version string) string {
	return filepath.Join(out, up.Name+"-"+version)
}

// LayoutDir is the OCI layout of one binary's image.
func LayoutDir(out string, up *pins.Upstream, version, binary string) string {
	return filepath.Join(Dir(out, up, version), binary)
}

// TarballPath is the `docker load` tarball of one binary's image for one
// platform.
func TarballPath(out string, up *pins.Upstream, version, binary string, p build.Platform) string {
	return filepath.Join(Dir(out, up, version), fmt.Sprintf("%s-%s-%s.tar", binary, p.OS, p.Arch))
}

// SBOMPath is the SPDX SBOM of one binary's image.
func SBOMPath(out string, up *pins.Upstream, version, binary string) string {
	return filepath.Join(Dir(out, up, version), binary+".spdx.json")
}

// CycloneDXPath is the CycloneDX SBOM of one binary's image, named as the
// CycloneDX specification recommends (*.cdx.json).
func CycloneDXPath(out string, up *pins.Upstream, version, binary string) string {
	return filepath.Join(Dir(out, up, version), binary+".cdx.json")
}

// Reference is an image's name: <registry>/<binary>:<holdfast version>.
func Reference(registry, binary, holdfastVersion string, opts ...name.Option) (name.Tag, error) {
	if registry == "" {
		registry = DefaultRegistry
	}
	ref, err := name.NewTag(strings.TrimSuffix(registry, "/")+"/"+binary+":"+holdfastVersion, append([]name.Option{name.StrictValidation}, opts...)...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference for %s in registry %q: %w", binary, registry, err)
	}
	return ref, nil
}

// Binaries returns the upstream's binary names, or only the ones asked
// for, each of which must be one of them.
func Binaries(up *pins.Upstream, only []string) ([]string, error) {
	var all []string
	for _, pkg := range up.Build {
		all = append(all, up.BinaryName(pkg))
	}
	if len(only) == 0 {
		return all, nil
	}
	for _, b := range only {
		if !slices.Contains(all, b) {
			return nil, fmt.Errorf("upstream %s builds no binary %q (it builds %s)", up.Name, b, strings.Join(all, ", "))
		}
	}
	return only, nil
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Build applies pin, cross-compiles its binaries and writes their images.
func Build(ctx context.Context, o Options, up *pins.Upstream, pin pins.Pin) ([]Built, error) {
	spec, err := image.SpecFor(up.Name)
	if err != nil {
		return nil, err
	}
	names, err := Binaries(up, o.Binaries)
	if err != nil {
		return nil, err
	}
	platforms := o.Platforms
	if len(platforms) == 0 {
		platforms = build.DefaultPlatforms
	}
	self, err := o.Trees.Self()
	if err != nil {
		return nil, err
	}
	tree, err := o.Trees.Build(ctx, up, pin, provenance.Patched)
	if err != nil {
		return nil, err
	}
	rec := tree.Record

	stamp := build.Stamp{Version: rec.HoldfastVersion, SeriesHash: rec.SeriesHash, Source: o.Source}
	paths := map[string][]image.Binary{}
	for _, p := range platforms {
		start := time.Now()
		bins, err := build.Build(ctx, build.Options{
			Tree: tree.Dir, Upstream: up, Pin: pin, Stamp: stamp, Out: o.Bin, Platform: p, Only: o.Binaries, Env: o.Env, Log: o.Log,
		})
		if err != nil {
			return nil, err
		}
		o.logf("  %s binaries built in %s", p, time.Since(start).Round(time.Second))
		for _, b := range bins {
			name := filepath.Base(b.Path)
			paths[name] = append(paths[name], image.Binary{OS: p.OS, Arch: p.Arch, Path: b.Path})
		}
	}

	caBundle, err := image.CABundle()
	if err != nil {
		return nil, err
	}
	goroot, modCache, err := goEnv(ctx, tree.Dir, o.Env)
	if err != nil {
		return nil, err
	}
	zoneinfo, err := goZoneinfo(goroot)
	if err != nil {
		return nil, err
	}
	// One finder for every image of the pin: their binaries share most
	// modules, each looked up once.
	licenses, err := modlicense.New(modCache, goroot, modlicense.CycloneDX())
	if err != nil {
		return nil, err
	}
	var built []Built
	for _, binary := range names {
		start := time.Now()
		ref, err := Reference(o.Registry, binary, rec.HoldfastVersion)
		if err != nil {
			return nil, err
		}
		img, err := image.Build(image.Input{
			Spec: spec,
			Provenance: image.Provenance{
				Binary: binary, Version: rec.HoldfastVersion,
				UpstreamModule: up.Module, UpstreamVersion: pin.Version, SeriesHash: rec.SeriesHash,
				Revision: o.Source.Commit, TreeState: o.Source.TreeState,
				Source: image.SourceURL(self), Created: o.Source.Date,
			},
			Binaries: paths[binary],
			Tree:     tree.Dir,
			CABundle: caBundle,
			ZoneInfo: zoneinfo,
			Licenses: licenses,
		})
		if err != nil {
			return nil, err
		}
		if gaps := img.SBOM.LicenseGaps; len(gaps) > 0 {
			o.logf("  %s: %d modules without a licence in the SBOM (NOASSERTION):", binary, len(gaps))
			for _, g := range gaps {
				o.logf("    %s", g)
			}
		}
		b, err := write(img, o.Out, up, pin.Version, binary, ref)
		if err != nil {
			return nil, err
		}
		o.logf("  %s@%s (%s)", b.Ref, b.Digest, time.Since(start).Round(time.Second))
		built = append(built, b)
	}
	return built, nil
}

func write(img *image.Image, out string, up *pins.Upstream, version, binary string, ref name.Tag) (Built, error) {
	digest, err := img.Index.Digest()
	if err != nil {
		return Built{}, err
	}
	b := Built{
		Binary: binary, Ref: ref, Digest: digest,
		Layout:    LayoutDir(out, up, version, binary),
		SBOM:      SBOMPath(out, up, version, binary),
		CycloneDX: CycloneDXPath(out, up, version, binary),
	}
	if err := img.WriteLayout(b.Layout, ref); err != nil {
		return Built{}, err
	}
	if err := image.WriteFile(b.SBOM, img.SBOM.SPDX); err != nil {
		return Built{}, err
	}
	if err := image.WriteFile(b.CycloneDX, img.SBOM.CycloneDX); err != nil {
		return Built{}, err
	}
	for _, p := range img.Platforms {
		path := TarballPath(out, up, version, binary, build.Platform{OS: p.Platform.OS, Arch: p.Platform.Architecture})
		if err := img.WriteDockerTarball(path, ref, p.Platform); err != nil {
			return Built{}, err
		}
		b.Tarballs = append(b.Tarballs, path)
	}
	return b, nil
}

// goEnv returns the GOROOT and GOMODCACHE of the go command that builds
// the tree: build.Toolchain's, whose standard library and time zone
// database are in the binaries.
func goEnv(ctx context.Context, tree string, env []string) (goroot, modCache string, err error) {
	g, err := build.ResolveGo(ctx, build.Toolchain)
	if err != nil {
		return "", "", err
	}
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.CommandContext(ctx, g.Bin, "env", "-json", "GOROOT", "GOMODCACHE")
	cmd.Dir, cmd.Env = tree, g.Env(env)
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("finding the Go toolchain of %s: go env GOROOT GOMODCACHE: %w", tree, err)
	}
	var vars struct{ GOROOT, GOMODCACHE string }
	if err := json.Unmarshal(out, &vars); err != nil {
		return "", "", fmt.Errorf("finding the Go toolchain of %s: go env -json: %w", tree, err)
	}
	return vars.GOROOT, vars.GOMODCACHE, nil
}

// goZoneinfo reads the time zone database of the Go toolchain at goroot.
func goZoneinfo(goroot string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(goroot, "lib", "time", "zoneinfo.zip"))
	if err != nil {
		return nil, fmt.Errorf("the Go toolchain's time zone database: %w", err)
	}
	return data, nil
}
