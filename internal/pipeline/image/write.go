package image

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteLayout writes the image as an OCI image layout in dir: the index,
// tagged ref (org.opencontainers.image.ref.name holds the tag, as `docker
// save` writes it, io.containerd.image.name the whole reference), then the
// SBOM artifact when it has one (a plain image has none). The layout is
// built beside dir and renamed into place, so dir is never half-written; a
// previous layout there is replaced.
func (img *Image) WriteLayout(dir string, ref name.Tag) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".partial-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 would hide the layout from other users
		return err
	}
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(img.Index, layout.WithAnnotations(map[string]string{
		AnnotationRefName:        ref.TagStr(),
		annotationContainerdName: ContainerdName(ref),
	})); err != nil {
		return fmt.Errorf("writing the layout of %s: %w", ref, err)
	}
	// A plain image (BuildPlain) has no SBOM to attach.
	if img.SBOMArtifact != nil {
		if err := lp.AppendImage(img.SBOMArtifact); err != nil {
			return fmt.Errorf("writing the SBOM of %s to its layout: %w", ref, err)
		}
	}
	if err := dataModes(tmp); err != nil {
		return err
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir) // put the previous layout back
		return err
	}
	return os.RemoveAll(old)
}

// ContainerdName is ref as containerd names an image (its reference
// normalisation, which the CRI and so kubelet use): Docker Hub is
// docker.io, as the charts write it, where go-containerregistry says
// index.docker.io; an image imported under that name is one no pod finds.
func ContainerdName(ref name.Tag) string {
	if ref.RegistryStr() == name.DefaultRegistry {
		return "docker.io/" + ref.RepositoryStr() + ":" + ref.TagStr()
	}
	return ref.Name()
}

// WriteDockerTarball writes one platform's image as a `docker load`
// tarball tagged ref: docker load takes a single platform.
func (img *Image) WriteDockerTarball(path string, ref name.Tag, p v1.Platform) error {
	for _, pi := range img.Platforms {
		if pi.Platform.OS == p.OS && pi.Platform.Architecture == p.Architecture {
			return writeFileAtomic(path, func(f *os.File) error { return tarball.Write(ref, pi.Image, f) })
		}
	}
	return fmt.Errorf("image %s has no %s/%s manifest", ref, p.OS, p.Architecture)
}

// writeFileAtomic writes path through a temporary file beside it.
func writeFileAtomic(path string, write func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone after the rename
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteFile writes data to path atomically (the SBOM beside the image).
func WriteFile(path string, data []byte) error {
	return writeFileAtomic(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// dataModes makes every file of a layout 0644: go-containerregistry's
// layout writes index.json, oci-layout and index blobs with os.ModePerm,
// and a release should not ship data files as executables.
func dataModes(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return os.Chmod(path, 0o644)
	})
}
