package node

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pauseImage is the sandbox image's name in containerd (sandbox_image).
const pauseImage = "holdfast.local/pause:holdfast"

// buildPause builds the pause program (./pause) static, from holdfast's
// own module.
func buildPause(root, out string) error {
	if err := BuildPrograms(context.Background(), root, out, "./internal/harness/node/pause"); err != nil {
		return fmt.Errorf("building the pause program: %w", err)
	}
	return nil
}

// BuildPrograms builds packages of holdfast's module (paths relative to
// root) as the programs the node runs: static, -trimpath, no VCS stamp.
// out is the binary for one package and a folder (one binary per package,
// named after its folder) for several. Every program the node suite builds
// goes through here, so that e2e-prepare, which builds them ahead with the
// same flags, leaves the suite a cache hit and a link: a program built
// with other flags or environment would compile its whole graph again.
func BuildPrograms(ctx context.Context, root, out string, pkgs ...string) error {
	if len(pkgs) == 0 {
		return fmt.Errorf("no package to build")
	}
	if len(pkgs) > 1 {
		out += string(filepath.Separator)
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-trimpath", "-o", out}, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", strings.Join(pkgs, " "), err, b)
	}
	return nil
}

// programImageTarball assembles a one-program image (the sandbox's pause,
// a test's probe) as a `docker save` tarball named ref: one layer with the
// static binary at /<base name> as entrypoint, run as 65535 like
// upstream's pause, for this machine's architecture only (the node runs
// here).
func programImageTarball(ref, program string, w io.Writer) error {
	data, err := os.ReadFile(program)
	if err != nil {
		return err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	// A fixed time keeps the image the same from run to run.
	epoch := time.Unix(0, 0)
	base := filepath.Base(program)
	if err := tw.WriteHeader(&tar.Header{Name: base, Mode: 0o755, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromReader(bytes.NewReader(layerTar.Bytes()))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Config:       v1.Config{Entrypoint: []string{"/" + base}, User: "65535:65535"},
		RootFS:       v1.RootFS{Type: "layers", DiffIDs: mustDiffIDs(layer)},
	})
	if err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	return tarball.Write(tag, img, w)
}

func mustDiffIDs(l v1.Layer) []v1.Hash {
	h, err := l.DiffID()
	if err != nil {
		return nil
	}
	return []v1.Hash{h}
}

// importPause puts the pause image into containerd's CRI namespace.
func (n *Node) importPause(ctx context.Context) error {
	return n.ImportProgram(ctx, pauseImage, n.layout.pause())
}

// ImportProgram imports a static program (CGO_ENABLED=0) as the image ref,
// with the program as its entrypoint: what a test runs in a pod.
func (n *Node) ImportProgram(ctx context.Context, ref, program string) error {
	path := n.layout.path("bin", strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := programImageTarball(ref, program, f); err != nil {
		f.Close()
		return fmt.Errorf("node %s: image %s: %w", n.opts.Name, ref, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return n.ctr(ctx, "images", "import", path)
}

func (n *Node) ctr(ctx context.Context, args ...string) error {
	return run(ctx, append([]string{"ctr", "-a", n.layout.containerdSocket(), "-n", "k8s.io"}, args...)...)
}

// Image is an image imported into the node's containerd.
type Image struct {
	// Name is the reference its layout names (io.containerd.image.name),
	// e.g. ghcr.io/holdfast-dist/worker-operator:v1.6.4-holdfast.3.
	Name string
	// Digest is the index's digest; the image is also tagged
	// <repository>@<digest>, the reference charts render.
	Digest string
}

// ByDigest is the repository@digest reference the image is also under.
func (i Image) ByDigest() string {
	repo := i.Name
	if at := strings.LastIndex(repo, ":"); at > strings.LastIndex(repo, "/") {
		repo = repo[:at]
	}
	return repo + "@" + i.Digest
}

// ImportLayout imports an OCI image layout as `holdfast images build`
// writes it (an index over both platforms, plus an SBOM artifact) into the
// node's containerd under the name its index carries, and tags it by
// digest: charts render images as repository@sha256:<index digest>, which
// containerd 1.6 does not resolve from a tag import. Only the named
// entries of the layout's index are imported (the SBOM artifact is not an
// image).
func (n *Node) ImportLayout(ctx context.Context, dir string) (Image, error) {
	index, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return Image{}, fmt.Errorf("image layout %s: %w", dir, err)
	}
	named, img, err := namedIndex(index)
	if err != nil {
		return Image{}, fmt.Errorf("image layout %s: %w", dir, err)
	}
	path := n.layout.path("bin", strings.NewReplacer("/", "_", ":", "_").Replace(img.Name)+".tar")
	if err := tarLayout(dir, named, path); err != nil {
		return Image{}, fmt.Errorf("image layout %s: %w", dir, err)
	}
	if err := n.ctr(ctx, "images", "import", path); err != nil {
		return Image{}, fmt.Errorf("importing %s into node %s: %w", img.Name, n.opts.Name, err)
	}
	if err := n.ctr(ctx, "images", "tag", "--force", img.Name, img.ByDigest()); err != nil {
		return Image{}, fmt.Errorf("tagging %s by digest on node %s: %w", img.Name, n.opts.Name, err)
	}
	return img, nil
}

// namedIndex returns the layout's index.json with only the entries naming
// an image, and the (first) image it names.
func namedIndex(index []byte) ([]byte, Image, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(index, &doc); err != nil {
		return nil, Image{}, err
	}
	var manifests []v1.Descriptor
	if err := json.Unmarshal(doc["manifests"], &manifests); err != nil {
		return nil, Image{}, err
	}
	var keep []v1.Descriptor
	var img Image
	for _, m := range manifests {
		if name := m.Annotations["io.containerd.image.name"]; name != "" {
			keep = append(keep, m)
			if img.Name == "" {
				img = Image{Name: name, Digest: m.Digest.String()}
			}
		}
	}
	if img.Name == "" {
		return nil, Image{}, fmt.Errorf("no entry of index.json carries io.containerd.image.name")
	}
	raw, err := json.Marshal(keep)
	if err != nil {
		return nil, Image{}, err
	}
	doc["manifests"] = raw
	out, err := json.Marshal(doc)
	return out, img, err
}

// tarLayout writes the layout folder as the tar `ctr images import` reads,
// with index.json replaced by index.
func tarLayout(dir string, index []byte, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "index.json" {
			data = index
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
