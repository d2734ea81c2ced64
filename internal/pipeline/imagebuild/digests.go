package imagebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Digests are what one built image is pulled by, read from the OCI layout
// Build wrote: the release notes list them and the charts default to them.
type Digests struct {
	Binary string
	// Ref is the published name, <DefaultRegistry>/<binary>:<holdfast version>.
	Ref string
	// Index is the multi-platform index's digest, the one to pin.
	Index v1.Hash
	// Platforms are the platform manifests' digests, sorted by platform.
	Platforms []PlatformDigest
}

// PlatformDigest is one platform's manifest in an image index.
type PlatformDigest struct {
	Platform string // os/arch
	Digest   v1.Hash
}

// ErrNoLayout is wrapped by ReadDigests when the image was never built.
var ErrNoLayout = fs.ErrNotExist

// ReadDigests reads the digests of binary's image of pin from its layout
// under out. The digests are the layout's own, never recomputed, so they are
// what `images push` sends. A layout of another holdfast version (images
// left from before a revision bump) is an error: its digest would pin the
// wrong build.
func ReadDigests(out string, up *pins.Upstream, pin pins.Pin, binary string) (Digests, error) {
	dir := LayoutDir(out, up, pin.Version, binary)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Digests{}, fmt.Errorf("image %s: no OCI layout at %s: %w", binary, dir, ErrNoLayout)
		}
		return Digests{}, fmt.Errorf("image %s: %w", binary, err)
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return Digests{}, fmt.Errorf("image %s: reading the OCI layout %s: %w", binary, dir, err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		return Digests{}, fmt.Errorf("image %s: reading the OCI layout %s: %w", binary, dir, err)
	}
	var found []v1.Descriptor
	for _, d := range im.Manifests {
		if d.MediaType == types.OCIImageIndex {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return Digests{}, fmt.Errorf("image %s: the OCI layout %s holds %d image indexes, want 1", binary, dir, len(found))
	}
	idx, err := root.ImageIndex(found[0].Digest)
	if err != nil {
		return Digests{}, fmt.Errorf("image %s: reading the OCI layout %s: %w", binary, dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return Digests{}, fmt.Errorf("image %s: reading the OCI layout %s: %w", binary, dir, err)
	}
	if got, want := m.Annotations[image.AnnotationVersion], pin.VersionString(); got != want {
		return Digests{}, fmt.Errorf("image %s in %s is of version %q, not %s (run `make images`)", binary, dir, got, want)
	}
	d := Digests{Binary: binary, Ref: DefaultRegistry + "/" + binary + ":" + pin.VersionString(), Index: found[0].Digest}
	for _, pd := range m.Manifests {
		if pd.Platform == nil {
			continue
		}
		d.Platforms = append(d.Platforms, PlatformDigest{Platform: pd.Platform.OS + "/" + pd.Platform.Architecture, Digest: pd.Digest})
	}
	if len(d.Platforms) == 0 {
		return Digests{}, fmt.Errorf("image %s: the index in %s names no platform", binary, dir)
	}
	sort.Slice(d.Platforms, func(i, j int) bool { return d.Platforms[i].Platform < d.Platforms[j].Platform })
	return d, nil
}

// ReadAllDigests reads the digests of every binary's image of pin, in the
// pin file's build order.
func ReadAllDigests(out string, up *pins.Upstream, pin pins.Pin) ([]Digests, error) {
	binaries, err := Binaries(up, nil)
	if err != nil {
		return nil, err
	}
	var all []Digests
	for _, b := range binaries {
		d, err := ReadDigests(out, up, pin, b)
		if err != nil {
			return nil, err
		}
		all = append(all, d)
	}
	return all, nil
}
