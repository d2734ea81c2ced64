package image

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Push sends the image in the OCI layout dir (WriteLayout's) to ref: the
// index under ref's tag, then every other manifest of the layout (the SBOM
// artifact) by digest into the same repository, or under its tag when the
// layout gives it one (a cosign signature). remote.Write files an
// artifact with a subject under the referrers API, or, on a registry
// without it, in the referrers tag schema (sha256-<digest>), so
// remote.Referrers finds it either way. It returns the index digest.
func Push(ctx context.Context, dir string, ref name.Tag, opts ...remote.Option) (v1.Hash, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	var index *v1.Descriptor
	var others []v1.Descriptor
	for i, d := range im.Manifests {
		if d.MediaType == types.OCIImageIndex || d.MediaType == types.DockerManifestList {
			if index != nil {
				return v1.Hash{}, fmt.Errorf("the OCI layout %s holds more than one index", dir)
			}
			index = &im.Manifests[i]
			continue
		}
		others = append(others, d)
	}
	if index == nil {
		return v1.Hash{}, fmt.Errorf("the OCI layout %s holds no image index", dir)
	}
	// A layout built for another version must not be pushed under this
	// one's tag.
	if tag := index.Annotations[AnnotationRefName]; tag != "" && tag != ref.TagStr() {
		return v1.Hash{}, fmt.Errorf("the OCI layout %s holds %s, not %s: rebuild it", dir, tag, ref.TagStr())
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	idx, err := root.ImageIndex(index.Digest)
	if err != nil {
		return v1.Hash{}, err
	}
	// The subject goes first, so a registry never holds a referrer to a
	// manifest it does not have.
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	for _, d := range others {
		img, err := root.Image(d.Digest)
		if err != nil {
			return v1.Hash{}, err
		}
		// A manifest the layout names with a tag (cosign's signature and
		// attestation manifests, sha256-<digest>.sig and .att, which
		// internal/supplychain/signing adds) goes under that tag: that is where
		// cosign and admission controllers look for it.
		var dst name.Reference = ref.Context().Digest(d.Digest.String())
		if tag := d.Annotations[AnnotationRefName]; tag != "" {
			dst = ref.Context().Tag(tag)
		}
		if err := remote.Write(dst, img, opts...); err != nil {
			return v1.Hash{}, fmt.Errorf("pushing %s: %w", dst, err)
		}
	}
	return index.Digest, nil
}
