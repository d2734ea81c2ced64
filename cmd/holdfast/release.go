package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/release"
	"github.com/holdfast-dist/holdfast/internal/supplychain/signing"
	"github.com/holdfast-dist/holdfast/internal/supplychain/slsa"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// runRelease assembles the release folder from what `make release`'s
// earlier steps wrote; it refuses a dirty checkout, a failing report or an
// artifact of another commit (internal/pipeline/release).
func runRelease(ctx context.Context, e *env, args []string) error {
	fs := e.flags("release")
	version := fs.String("version", "", "release version, vX.Y.Z[-pre]")
	out := fs.String("out", "", "folder receiving VERSION/ (default: <root>/"+release.DefaultOut+")")
	pristineBin := fs.String("pristine-bin", filepath.Join(e.root, release.DefaultPristineBin), "folder of the pristine twins built with upstream's Go (make upstream-go-twins) for the notes' side-by-side table")
	preflight := fs.Bool("preflight", false, "only check what needs no artifact (version, clean checkout, free destination, signing configuration)")
	signKey := fs.String("sign-key", "", "cosign private key file or KMS URI to sign with (a key file's password in COSIGN_PASSWORD)")
	keyless := fs.Bool("keyless", false, "sign keylessly with the ambient OIDC identity (the release workflow)")
	tlog := fs.Bool("tlog-upload", false, "also record key-based signatures in the Rekor transparency log (needs the network)")
	unsigned := fs.Bool("unsigned", false, "write an unsigned rehearsal release (its notes say so)")
	identity := fs.String("identity", imagebuild.DefaultRegistry, "registry and namespace the images are published under, named in their signatures")
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
	var sig *release.Signing
	if *signKey != "" || *keyless {
		if sig, err = releaseSigning(ctx, e, *version, source, *signKey, *keyless, *tlog, *identity, *preflight); err != nil {
			return err
		}
	}
	dir, err := release.Assemble(ctx, release.Options{
		Version: *version, Source: source, Shipped: shipped,
		Inputs: release.DefaultInputs(e.root), Out: *out, Log: e.stderr,
		Checks: releaseChecks(e.root, f, shipped, source), Preflight: *preflight,
		Signing: sig, Unsigned: *unsigned,
		Vulnerabilities: release.ScanVulnerabilities(e.root, *version, shipped, *pristineBin),
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

// releaseSigning builds cosign (once, into the tool cache) and describes
// the release's signing and provenance.
func releaseSigning(ctx context.Context, e *env, version string, source build.Source, key string, keyless, tlog bool, identity string, preflight bool) (*release.Signing, error) {
	s := &signing.Signer{Key: key, Keyless: keyless, TlogUpload: tlog, Identity: identity, Log: e.stderr, Cosign: "cosign"}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cosign, err := toolcache.Ensure(ctx, e.root, toolcache.Cosign)
	if err != nil {
		return nil, err
	}
	s.Cosign = cosign
	sig := &release.Signing{Signer: s}
	if !keyless {
		// Assemble refuses a key-signed release whose public key the
		// commit does not hold (release.PublishedKeyPath).
		if sig.PublishedKey, err = release.CommittedPublicKey(ctx, e.root); err != nil {
			return nil, err
		}
	}
	if preflight {
		return sig, nil
	}
	if sig.PublicKey, err = s.PublicKey(ctx); err != nil {
		return nil, err
	}
	self, err := pipeline.Config{Root: e.root}.Self()
	if err != nil {
		return nil, err
	}
	var platforms []string
	for _, p := range build.DefaultPlatforms {
		platforms = append(platforms, p.String())
	}
	sig.Build = slsa.Build{
		Release: version, Repository: image.SourceURL(self), Commit: source.Commit,
		// The binaries' Go is build.Toolchain, whatever Go runs holdfast;
		// VerifyBinaries refuses any other.
		GoVersion: build.Toolchain, Platforms: platforms,
		Builder: slsa.BuilderFromEnv(os.Getenv),
	}
	return sig, nil
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
