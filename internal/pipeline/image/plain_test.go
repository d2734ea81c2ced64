package image_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

func plainInput(t *testing.T) image.PlainInput {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(bin, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	return image.PlainInput{
		Name:       "prog",
		Platform:   v1.Platform{OS: "linux", Architecture: "amd64"},
		Entrypoint: []string{"/usr/bin/prog"},
		Env:        []string{"PATH=/opt/x/bin:/usr/bin:/bin"},
		User:       "1001",
		WorkingDir: "/work",
		Layers: []image.Layer{
			{CreatedBy: "shell", Files: []image.File{
				{Name: "/bin/busybox", Source: bin, Mode: 0o755},
				{Name: "/bin/sh", Symlink: "busybox"},
				{Name: "/bin/bash", Data: []byte("#!/bin/sh\nexec /bin/sh \"$@\"\n"), Mode: 0o755},
			}},
			{CreatedBy: "prog", Files: []image.File{
				{Name: "/usr/bin/prog", Source: bin, Mode: 0o755},
				{Name: "/.kube", Dir: true, Mode: 0o775},
			}},
		},
		CABundle:    []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		Annotations: map[string]string{image.AnnotationTitle: "example.com/prog:v1"},
		Created:     time.Unix(0, 0).UTC(),
	}
}

func TestBuildPlain(t *testing.T) {
	in := plainInput(t)
	img, err := image.BuildPlain(in)
	if err != nil {
		t.Fatal(err)
	}
	im, err := img.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.Architecture != "amd64" {
		t.Fatalf("index manifests %+v, want one linux/amd64", im.Manifests)
	}
	if im.Annotations[image.AnnotationTitle] != "example.com/prog:v1" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	cfg, err := img.Platforms[0].Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := v1.Config{Entrypoint: in.Entrypoint, Env: in.Env, User: "1001", WorkingDir: "/work", Labels: in.Annotations}
	if !reflect.DeepEqual(cfg.Config, want) {
		t.Errorf("config %+v, want %+v", cfg.Config, want)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || !cfg.Created.Time.Equal(in.Created) {
		t.Errorf("config os %s arch %s created %s", cfg.OS, cfg.Architecture, cfg.Created)
	}
	layers, err := img.Platforms[0].Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 {
		t.Fatalf("%d layers, want the root filesystem and the two given", len(layers))
	}
	got := map[string]*tar.Header{}
	for _, l := range layers[1:] {
		for _, e := range layerEntries(t, l) {
			got[e.hdr.Name] = e.hdr
		}
	}
	for name, check := range map[string]func(h *tar.Header) bool{
		"bin/busybox":  func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg && h.Mode == 0o755 },
		"bin/sh":       func(h *tar.Header) bool { return h.Typeflag == tar.TypeSymlink && h.Linkname == "busybox" },
		"bin/bash":     func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg && h.Mode == 0o755 && h.Size > 0 },
		"usr/bin/prog": func(h *tar.Header) bool { return h.Typeflag == tar.TypeReg && h.Mode == 0o755 },
		".kube/":       func(h *tar.Header) bool { return h.Typeflag == tar.TypeDir && h.Mode == 0o775 },
	} {
		if h, ok := got[name]; !ok || !check(h) {
			t.Errorf("layer entry %s: %+v", name, h)
		}
	}
	again, err := image.BuildPlain(in)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, again.Index) != digest(t, img.Index) {
		t.Error("the same input gives another digest")
	}
}

func TestBuildPlainRefusesAmbiguousFiles(t *testing.T) {
	for _, f := range []image.File{
		{Name: "relative", Data: []byte("x")},
		{Name: "/two", Data: []byte("x"), Symlink: "y"},
		{Name: "/none"},
	} {
		in := plainInput(t)
		in.Layers = []image.Layer{{CreatedBy: "bad", Files: []image.File{f}}}
		if _, err := image.BuildPlain(in); err == nil || !strings.Contains(err.Error(), f.Name) {
			t.Errorf("file %+v: err = %v, want one naming it", f, err)
		}
	}
}

// containerd normalises a Docker Hub name to docker.io/<namespace>/<name>,
// and kubelet asks for an image by that name; a layout that calls it
// index.docker.io/... imports an image no pod finds.
func TestWriteLayoutNamesDockerHubImagesAsContainerd(t *testing.T) {
	img, err := image.BuildPlain(plainInput(t))
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"docker.io/karmada/karmada-scheduler:v1.18.2": "docker.io/karmada/karmada-scheduler:v1.18.2",
		"busybox:1.36":                   "docker.io/library/busybox:1.36",
		"registry.k8s.io/etcd:3.6.6-0":   "registry.k8s.io/etcd:3.6.6-0",
		"ghcr.io/holdfast-dist/hello:v1": "ghcr.io/holdfast-dist/hello:v1",
	} {
		dir := filepath.Join(t.TempDir(), "layout")
		if err := img.WriteLayout(dir, mustTag(t, ref)); err != nil {
			t.Fatal(err)
		}
		root, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		im, err := root.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Manifests) != 1 {
			t.Fatalf("%s: %d entries, want the index alone (a plain image has no SBOM)", ref, len(im.Manifests))
		}
		if got := im.Manifests[0].Annotations["io.containerd.image.name"]; got != want {
			t.Errorf("%s: io.containerd.image.name %q, want %q", ref, got, want)
		}
	}
}

func mustTag(t *testing.T, ref string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
