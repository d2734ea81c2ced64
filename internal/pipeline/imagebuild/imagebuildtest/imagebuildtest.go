// Package imagebuildtest writes stand-in image layouts shaped as
// imagebuild.Build writes them, for the tests of what reads them (release
// notes, chart digests, release gates) without building real images.
package imagebuildtest

import (
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// WriteImages writes, for every binary of pin, an OCI layout whose index
// (random content, one manifest per platform) carries the provenance
// annotations imagebuild.Verify and ReadDigests read, plus the per-platform
// tarballs and the SBOMs. It returns each binary's index digest.
func WriteImages(out string, up *pins.Upstream, pin pins.Pin, revision string, platforms []build.Platform) (map[string]v1.Hash, error) {
	return WriteImagesOfTree(out, up, pin, revision, "clean", platforms)
}

// WriteImagesOfTree is WriteImages with the tree-state annotation given
// ("clean" or "dirty"), for the gates that refuse a dirty checkout's images.
func WriteImagesOfTree(out string, up *pins.Upstream, pin pins.Pin, revision, treeState string, platforms []build.Platform) (map[string]v1.Hash, error) {
	if len(platforms) == 0 {
		platforms = build.DefaultPlatforms
	}
	bins, err := imagebuild.Binaries(up, nil)
	if err != nil {
		return nil, err
	}
	digests := map[string]v1.Hash{}
	for _, binary := range bins {
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		for _, p := range platforms {
			img, err := random.Image(64, 1)
			if err != nil {
				return nil, err
			}
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
				Add:        img,
				Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
			})
			tarball := imagebuild.TarballPath(out, up, pin.Version, binary, p)
			if err := os.MkdirAll(filepath.Dir(tarball), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(tarball, []byte("tar"), 0o644); err != nil {
				return nil, err
			}
		}
		idx = mutate.Annotations(idx, map[string]string{
			image.AnnotationVersion:   pin.VersionString(),
			image.AnnotationRevision:  revision,
			image.AnnotationTreeState: treeState,
		}).(v1.ImageIndex)
		lp, err := layout.Write(imagebuild.LayoutDir(out, up, pin.Version, binary), empty.Index)
		if err != nil {
			return nil, err
		}
		if err := lp.AppendIndex(idx); err != nil {
			return nil, err
		}
		if digests[binary], err = idx.Digest(); err != nil {
			return nil, err
		}
		for _, sbom := range []string{imagebuild.SBOMPath(out, up, pin.Version, binary), imagebuild.CycloneDXPath(out, up, pin.Version, binary)} {
			if err := os.WriteFile(sbom, []byte("{}"), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return digests, nil
}
