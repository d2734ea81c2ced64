package image

import (
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a plain image's layer.
type File struct {
	// Name is the path in the image, absolute ("/bin/sh").
	Name string
	// Source is a file on disk to copy; Data is content given inline;
	// Symlink makes the entry a symbolic link; Dir a folder. Exactly one.
	Source  string
	Data    []byte
	Symlink string
	Dir     bool
	// Mode is the permission bits (0755 for a program).
	Mode int64
	// UID and GID own the entry (0: root).
	UID, GID int
}

// Layer is a set of files added in one layer, with the history line that
// says where they come from.
type Layer struct {
	CreatedBy string
	Files     []File
}

// PlainInput is an image holdfast does not ship: a stand-in for an image a
// chart deploys (a test node imports it under the chart's name). It has
// the same root filesystem as holdfast's images and is built by the same
// layer writer, so it is as reproducible, but it carries no holdfast
// provenance and no SBOM: what it was made from is in its annotations.
type PlainInput struct {
	// Name is what the image is, for errors and history ("kube-apiserver").
	Name     string
	Platform v1.Platform
	// Entrypoint, Env, User and WorkingDir are the config's; Env is the
	// whole environment (PATH included).
	Entrypoint []string
	Env        []string
	User       string
	WorkingDir string
	// Layers come after the root filesystem layer, in order.
	Layers []Layer
	// Tree and TreeFiles: folders of a source tree copied to the same path
	// under / in a layer of their own (Spec.TreeFiles).
	Tree      string
	TreeFiles []string
	// CABundle (CABundle()) and ZoneInfo (nil: no time zones) make the
	// root filesystem layer.
	CABundle, ZoneInfo []byte
	// Annotations go on the index and the manifest and are the config's
	// labels.
	Annotations map[string]string
	// Created is the fixed time of every entry and of the config.
	Created time.Time
}

// DefaultEnv is the environment of holdfast's images: PATH as alpine and
// distroless set it.
func DefaultEnv() []string { return []string{defaultPath} }

// BuildPlain assembles a single-platform image index from in.
func BuildPlain(in PlainInput) (*Image, error) {
	if in.Name == "" || in.Platform.OS == "" || in.Platform.Architecture == "" {
		return nil, fmt.Errorf("plain image %q: Name and Platform are required", in.Name)
	}
	if in.Created.IsZero() {
		return nil, fmt.Errorf("plain image %s: Created is unset (want a fixed date)", in.Name)
	}
	hist := func(by string) v1.History {
		return v1.History{Created: v1.Time{Time: in.Created.UTC()}, CreatedBy: by}
	}
	rootFiles, err := rootfsFiles(in.CABundle, in.ZoneInfo)
	if err != nil {
		return nil, err
	}
	rootfs, err := newLayer(rootFiles, in.Created)
	if err != nil {
		return nil, fmt.Errorf("plain image %s: root filesystem layer: %w", in.Name, err)
	}
	adds := []mutate.Addendum{{Layer: rootfs, History: hist("holdfast rootfs: CA certificates (" + caBundleModule + "), accounts root, nobody and nonroot 65532")}}
	if len(in.TreeFiles) > 0 {
		files, err := treeFiles(in.Tree, in.TreeFiles)
		if err != nil {
			return nil, fmt.Errorf("plain image %s: %w", in.Name, err)
		}
		layer, err := newLayer(files, in.Created)
		if err != nil {
			return nil, fmt.Errorf("plain image %s: tree files layer: %w", in.Name, err)
		}
		adds = append(adds, mutate.Addendum{Layer: layer, History: hist("COPY " + strings.Join(in.TreeFiles, " ") + " from " + in.Tree)})
	}
	for _, l := range in.Layers {
		files := make([]file, 0, len(l.Files))
		for _, f := range l.Files {
			lf, err := f.layerFile()
			if err != nil {
				return nil, fmt.Errorf("plain image %s: %w", in.Name, err)
			}
			files = append(files, lf)
		}
		layer, err := newLayer(files, in.Created)
		if err != nil {
			return nil, fmt.Errorf("plain image %s: layer %q: %w", in.Name, l.CreatedBy, err)
		}
		adds = append(adds, mutate.Addendum{Layer: layer, History: hist(l.CreatedBy)})
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, fmt.Errorf("plain image %s: %w", in.Name, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = in.Platform.OS, in.Platform.Architecture
	cfg.Created = v1.Time{Time: in.Created.UTC()}
	cfg.Config = v1.Config{
		Entrypoint: in.Entrypoint,
		Env:        in.Env,
		User:       in.User,
		WorkingDir: in.WorkingDir,
		Labels:     maps.Clone(in.Annotations),
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	if len(in.Annotations) > 0 {
		img = mutate.Annotations(img, in.Annotations).(v1.Image)
	}
	platform := v1.Platform{OS: in.Platform.OS, Architecture: in.Platform.Architecture}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	if len(in.Annotations) > 0 {
		idx = mutate.Annotations(idx, in.Annotations).(v1.ImageIndex)
	}
	return &Image{Index: idx, Platforms: []PlatformImage{{Platform: platform, Image: img}}}, nil
}

// layerFile checks f and turns it into a layer entry.
func (f File) layerFile() (file, error) {
	if !strings.HasPrefix(f.Name, "/") {
		return file{}, fmt.Errorf("file %q: want an absolute path in the image", f.Name)
	}
	kinds := 0
	for _, set := range []bool{f.Source != "", f.Data != nil, f.Symlink != "", f.Dir} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return file{}, fmt.Errorf("file %s: want exactly one of Source, Data, Symlink and Dir", f.Name)
	}
	return file{
		Name: strings.TrimPrefix(f.Name, "/"), Dir: f.Dir, Mode: f.Mode, UID: f.UID, GID: f.GID,
		Data: f.Data, Source: f.Source, Symlink: f.Symlink,
	}, nil
}
