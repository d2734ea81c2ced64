package imagebuild

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Verify checks that the images Build writes for one pin are all in out
// and were built from revision on a clean checkout, for every platform: a
// release must not ship an image left over from another commit, a dirty
// tree or a single-platform build (`make images PLATFORMS=linux/amd64`).
// The error names the first image that is not so and how to rebuild it.
func Verify(out string, up *pins.Upstream, version, revision string, platforms []build.Platform) error {
	if len(platforms) == 0 {
		platforms = build.DefaultPlatforms
	}
	binaries, err := Binaries(up, nil)
	if err != nil {
		return err
	}
	for _, binary := range binaries {
		if err := verifyOne(out, up, version, binary, revision, platforms); err != nil {
			return fmt.Errorf("image %s of %s %s: %w (run `make images`)", binary, up.Name, version, err)
		}
	}
	return nil
}

func verifyOne(out string, up *pins.Upstream, version, binary, revision string, platforms []build.Platform) error {
	dir := LayoutDir(out, up, version, binary)
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return fmt.Errorf("no OCI layout at %s: %w", dir, err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		return fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	var indexes int
	for _, d := range im.Manifests {
		if d.MediaType != types.OCIImageIndex {
			continue
		}
		indexes++
		idx, err := root.ImageIndex(d.Digest)
		if err != nil {
			return fmt.Errorf("reading the OCI layout %s: %w", dir, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return fmt.Errorf("reading the OCI layout %s: %w", dir, err)
		}
		if got := m.Annotations[image.AnnotationRevision]; got != revision {
			return fmt.Errorf("built from holdfast commit %q, not %s", got, revision)
		}
		if got := m.Annotations[image.AnnotationTreeState]; got != "clean" {
			return fmt.Errorf("built from a %q checkout, not a clean one", got)
		}
		var have []string
		for _, pd := range m.Manifests {
			if pd.Platform != nil {
				have = append(have, pd.Platform.OS+"/"+pd.Platform.Architecture)
			}
		}
		for _, p := range platforms {
			if !slices.Contains(have, p.String()) {
				return fmt.Errorf("has no %s image (it has %s)", p, strings.Join(have, ", "))
			}
			if _, err := os.Stat(TarballPath(out, up, version, binary, p)); err != nil {
				return fmt.Errorf("has no %s tarball: %w", p, err)
			}
		}
	}
	if indexes != 1 {
		return fmt.Errorf("the OCI layout %s holds %d image indexes, want 1", dir, indexes)
	}
	if _, err := os.Stat(SBOMPath(out, up, version, binary)); err != nil {
		return fmt.Errorf("has no SBOM: %w", err)
	}
	if _, err := os.Stat(CycloneDXPath(out, up, version, binary)); err != nil {
		return fmt.Errorf("has no CycloneDX SBOM: %w", err)
	}
	return nil
}
