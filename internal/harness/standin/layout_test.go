package standin

import (
	"archive/tar"
	"io"
	"path"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// imageFS is an image's filesystem read back from its layout: every
// layer's entries, later layers over earlier ones, and its config.
type imageFS struct {
	files map[string]*tar.Header // by absolute path
	// small holds the content of regular files under 64 KiB.
	small  map[string][]byte
	config v1.Config
	// name is the layout's io.containerd.image.name.
	name string
}

func readLayout(t *testing.T, dir string) imageFS {
	t.Helper()
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	rim, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rim.Manifests) != 1 {
		t.Fatalf("%s: %d entries in index.json, want one image index", dir, len(rim.Manifests))
	}
	fs := imageFS{files: map[string]*tar.Header{}, small: map[string][]byte{}, name: rim.Manifests[0].Annotations["io.containerd.image.name"]}
	idx, err := root.ImageIndex(rim.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.String() != "linux/amd64" {
		t.Fatalf("%s: manifests %+v, want linux/amd64 alone", dir, im.Manifests)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	fs.config = cfg.Config
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := "/" + strings.TrimSuffix(h.Name, "/")
			fs.files[p] = h
			if h.Typeflag == tar.TypeReg && h.Size < 64<<10 {
				if fs.small[p], err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		rc.Close()
	}
	return fs
}

// resolve follows symbolic links from p to a regular file or folder.
func (fs imageFS) resolve(p string) (*tar.Header, string, bool) {
	for range 10 {
		h, ok := fs.files[p]
		if !ok {
			return nil, p, false
		}
		if h.Typeflag != tar.TypeSymlink {
			return h, p, true
		}
		if path.IsAbs(h.Linkname) {
			p = h.Linkname
		} else {
			p = path.Join(path.Dir(p), h.Linkname)
		}
	}
	return nil, p, false
}

// env returns the config's value of key.
func (fs imageFS) env(key string) string {
	for _, kv := range fs.config.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds command as a container runtime does: an absolute path as
// it is, a bare name in the config's PATH. It must be an executable
// regular file.
func (fs imageFS) lookPath(command string) (string, bool) {
	candidates := []string{command}
	if !strings.Contains(command, "/") {
		candidates = nil
		for _, dir := range strings.Split(fs.env("PATH"), ":") {
			candidates = append(candidates, path.Join(dir, command))
		}
	}
	for _, c := range candidates {
		if h, _, ok := fs.resolve(c); ok && h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 {
			return c, true
		}
	}
	return "", false
}
