package image

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Input is everything one image is made from.
type Input struct {
	Spec       Spec
	Provenance Provenance
	// Binaries are the binary's builds, one per platform.
	Binaries []Binary
	// Tree is the patched tree Spec.TreeFiles are read from.
	Tree string
	// CABundle is the PEM bundle (CABundle()).
	CABundle []byte
	// ZoneInfo is the Go toolchain's lib/time/zoneinfo.zip; nil leaves
	// time zones out.
	ZoneInfo []byte
	// Licenses finds the modules' licences for the SBOM
	// (modlicense.Finder over the module cache of the binaries' build).
	Licenses Licenses
}

// Image is an assembled image: an index over the platforms' manifests,
// and its SBOM, both as documents and as an artifact referring to the
// index.
type Image struct {
	Index     v1.ImageIndex
	Platforms []PlatformImage
	SBOM      SBOM
	// SBOMArtifact is the manifest that attaches the SPDX SBOM to Index
	// (its subject).
	SBOMArtifact v1.Image
}

// PlatformImage is one platform's manifest.
type PlatformImage struct {
	Platform v1.Platform
	Image    v1.Image
}

// Build assembles the image. It reads the binaries and tree files but
// writes nothing; see WriteLayout, WriteDockerTarball and Push.
func Build(in Input) (*Image, error) {
	p := in.Provenance
	if err := p.validate(); err != nil {
		return nil, err
	}
	if len(in.Binaries) == 0 {
		return nil, fmt.Errorf("image %s: no binary", p.Binary)
	}
	bins := append([]Binary(nil), in.Binaries...)
	sort.Slice(bins, func(i, j int) bool { return bins[i].platform() < bins[j].platform() })
	for i := 1; i < len(bins); i++ {
		if bins[i].platform() == bins[i-1].platform() {
			return nil, fmt.Errorf("image %s: two binaries for %s", p.Binary, bins[i].platform())
		}
	}
	sbom, err := NewSBOM(p, bins, in.Licenses) // also checks each binary is for its platform
	if err != nil {
		return nil, err
	}

	// Every layer but the binary's is the same on each platform, so it is
	// built once and shared (and stored once in a registry).
	rootFiles, err := rootfsFiles(in.CABundle, in.ZoneInfo)
	if err != nil {
		return nil, err
	}
	rootfs, err := newLayer(rootFiles, p.Created)
	if err != nil {
		return nil, fmt.Errorf("image %s: root filesystem layer: %w", p.Binary, err)
	}
	adds := []mutate.Addendum{{
		Layer:   rootfs,
		History: history(p, "holdfast rootfs: CA certificates ("+caBundleModule+"), time zones (Go toolchain), accounts root, nobody and nonroot 65532"),
	}}
	if len(in.Spec.TreeFiles) > 0 {
		treeFiles, err := treeFiles(in.Tree, in.Spec.TreeFiles)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", p.Binary, err)
		}
		layer, err := newLayer(treeFiles, p.Created)
		if err != nil {
			return nil, fmt.Errorf("image %s: tree files layer: %w", p.Binary, err)
		}
		adds = append(adds, mutate.Addendum{Layer: layer, History: history(p, "holdfast: COPY "+strings.Join(in.Spec.TreeFiles, " ")+" from the patched tree")})
	}

	annotations := p.Annotations()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	img := &Image{SBOM: sbom}
	for _, b := range bins {
		pi, err := platformImage(in.Spec, p, b, adds, annotations)
		if err != nil {
			return nil, err
		}
		img.Platforms = append(img.Platforms, pi)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        pi.Image,
			Descriptor: v1.Descriptor{Platform: &pi.Platform},
		})
	}
	img.Index = mutate.Annotations(idx, annotations).(v1.ImageIndex)

	if img.SBOMArtifact, err = sbomArtifact(img.Index, sbom.SPDX, p); err != nil {
		return nil, fmt.Errorf("image %s: SBOM artifact: %w", p.Binary, err)
	}
	return img, nil
}

// platformImage adds the binary's layer to the shared ones and writes the
// config.
func platformImage(spec Spec, p Provenance, b Binary, shared []mutate.Addendum, annotations map[string]string) (PlatformImage, error) {
	binPath := strings.TrimPrefix(spec.BinaryPath(p.Binary), "/")
	bin := file{Name: binPath, Mode: 0o755, Source: b.Path}
	layer, err := newLayer([]file{bin}, p.Created)
	if err != nil {
		return PlatformImage{}, fmt.Errorf("image %s %s: binary layer: %w", p.Binary, b.platform(), err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	adds := append(append([]mutate.Addendum(nil), shared...), mutate.Addendum{
		Layer: layer, History: history(p, "holdfast: COPY "+p.Binary+" /"+binPath),
	})
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return PlatformImage{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return PlatformImage{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = b.OS, b.Arch
	cfg.Created = v1.Time{Time: p.Created.UTC()}
	cfg.Config = v1.Config{
		Entrypoint: spec.Entrypoint,
		Env:        append([]string{defaultPath}, spec.Env...),
		User:       spec.User,
		WorkingDir: spec.WorkingDir,
		Labels:     maps.Clone(annotations),
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return PlatformImage{}, err
	}
	img = mutate.Annotations(img, annotations).(v1.Image)
	return PlatformImage{Platform: v1.Platform{OS: b.OS, Architecture: b.Arch}, Image: img}, nil
}

func history(p Provenance, createdBy string) v1.History {
	return v1.History{Created: v1.Time{Time: p.Created.UTC()}, CreatedBy: createdBy, Author: "holdfast " + p.Version}
}

// treeFiles reads folders of the patched tree as layer files at the same
// path under /, root-owned. The module zip a tree comes from keeps no
// modes, so files are 0644 and folders 0755; worker-operator reads its
// files as data.
func treeFiles(tree string, dirs []string) ([]file, error) {
	var files []file
	for _, dir := range dirs {
		root := filepath.Join(tree, filepath.FromSlash(dir))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(tree, p)
			if err != nil {
				return err
			}
			name := path.Clean(filepath.ToSlash(rel))
			switch {
			case d.IsDir():
				files = append(files, file{Name: name, Dir: true, Mode: 0o755})
			case d.Type().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files = append(files, file{Name: name, Mode: 0o644, Data: data})
			default:
				return fmt.Errorf("%s is neither a file nor a folder", p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("tree files %s: %w", dir, err)
		}
	}
	return files, nil
}
