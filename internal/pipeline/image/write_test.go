package image_test

import (
	"context"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

const testRef = "ghcr.io/holdfast-dist/hello:v1.2.0-holdfast.3"

func TestWriteLayout(t *testing.T) {
	img, _ := sharedImage(t)
	ref := name.MustParseReference(testRef).(name.Tag)
	dir := filepath.Join(t.TempDir(), "hello")
	for range 2 { // the second write replaces the first
		if err := img.WriteLayout(dir, ref); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("%d entries beside the layout, want none (no partial or old folders)", len(entries)-1)
	}
	// Layouts are data: no file in one is executable.
	if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", strings.TrimPrefix(path, dir), info.Mode().Perm())
		}
		return nil
	}); err != nil {
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
	if len(im.Manifests) != 2 {
		t.Fatalf("layout index lists %d manifests, want the index and the SBOM", len(im.Manifests))
	}
	idx, sbom := im.Manifests[0], im.Manifests[1]
	if idx.MediaType != types.OCIImageIndex || idx.Digest != digest(t, img.Index) {
		t.Errorf("first entry %s %s, want the image index %s", idx.MediaType, idx.Digest, digest(t, img.Index))
	}
	if idx.Annotations["org.opencontainers.image.ref.name"] != "v1.2.0-holdfast.3" || idx.Annotations["io.containerd.image.name"] != testRef {
		t.Errorf("index entry annotations %v", idx.Annotations)
	}
	if sbom.Digest != digest(t, img.SBOMArtifact) {
		t.Errorf("second entry %s, want the SBOM artifact", sbom.Digest)
	}
	assertSBOMArtifact(t, must(root.Image(sbom.Digest)), img)
	// Every blob the index needs is in the layout.
	back, err := root.ImageIndex(idx.Digest)
	if err != nil {
		t.Fatal(err)
	}
	bim, _ := back.IndexManifest()
	for _, d := range bim.Manifests {
		pimg, err := back.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := pimg.Layers()
		for _, l := range layers {
			rc, err := l.Compressed()
			if err != nil {
				t.Fatalf("%s: layer blob missing: %v", d.Platform, err)
			}
			rc.Close()
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// assertSBOMArtifact checks the artifact: subject the index, artifact
// type SPDX, its one layer the SBOM.
func assertSBOMArtifact(t *testing.T, art v1.Image, img *image.Image) {
	t.Helper()
	m, err := art.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject == nil || m.Subject.Digest != digest(t, img.Index) || m.Subject.MediaType != types.OCIImageIndex {
		t.Errorf("SBOM subject %+v, want the index %s", m.Subject, digest(t, img.Index))
	}
	if m.Config.MediaType != "application/spdx+json" || len(m.Layers) != 1 || m.Layers[0].MediaType != "application/spdx+json" {
		t.Errorf("SBOM manifest config %s, layers %+v", m.Config.MediaType, m.Layers)
	}
	if cfg, _ := art.RawConfigFile(); string(cfg) != "{}" {
		t.Errorf("SBOM config %q, want the empty JSON", cfg)
	}
	layers, err := art.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("SBOM layers: %v %v", layers, err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, _ := io.ReadAll(rc)
	if string(data) != string(img.SBOM.SPDX) {
		t.Error("the SBOM artifact's layer is not the SBOM")
	}
}

func TestWriteDockerTarball(t *testing.T) {
	img, _ := sharedImage(t)
	ref := name.MustParseReference(testRef).(name.Tag)
	for _, pi := range img.Platforms {
		path := filepath.Join(t.TempDir(), "hello.tar")
		if err := img.WriteDockerTarball(path, ref, pi.Platform); err != nil {
			t.Fatal(err)
		}
		// docker load reads manifest.json's RepoTags; tarball.Image reads
		// the same file.
		m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != testRef {
			t.Errorf("%s: docker manifest %+v", pi.Platform, m)
		}
		loaded, err := tarball.ImageFromPath(path, &ref)
		if err != nil {
			t.Fatal(err)
		}
		wantCfg, _ := pi.Image.ConfigName()
		if got, _ := loaded.ConfigName(); got != wantCfg {
			t.Errorf("%s: tarball config %s, want %s", pi.Platform, got, wantCfg)
		}
	}
	if err := img.WriteDockerTarball(filepath.Join(t.TempDir(), "x.tar"), ref, v1.Platform{OS: "linux", Architecture: "s390x"}); err == nil || !strings.Contains(err.Error(), "no linux/s390x manifest") {
		t.Errorf("an unbuilt platform: err = %v", err)
	}
}

// TestPush pushes a layout to an in-process registry, with and without the
// referrers API, and pulls it back.
func TestPush(t *testing.T) {
	img, _ := sharedImage(t)
	for _, referrers := range []bool{true, false} {
		mode := "referrers API"
		if !referrers {
			mode = "referrers tag schema"
		}
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(referrers), registry.Logger(log.New(io.Discard, "", 0))))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			ref, err := name.NewTag(host + "/holdfast-dist/hello:v1.2.0-holdfast.3")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "hello")
			if err := img.WriteLayout(dir, ref); err != nil {
				t.Fatal(err)
			}
			got, err := image.Push(context.Background(), dir, ref)
			if err != nil {
				t.Fatal(err)
			}
			if want := digest(t, img.Index); got != want {
				t.Errorf("Push returned %s, want %s", got, want)
			}
			pulled, err := remote.Index(ref)
			if err != nil {
				t.Fatal(err)
			}
			if digest(t, pulled) != got {
				t.Errorf("pulled index %s, pushed %s", digest(t, pulled), got)
			}
			refs, err := remote.Referrers(ref.Context().Digest(got.String()))
			if err != nil {
				t.Fatal(err)
			}
			rm, _ := refs.IndexManifest()
			if len(rm.Manifests) != 1 || rm.Manifests[0].ArtifactType != "application/spdx+json" || rm.Manifests[0].Digest != digest(t, img.SBOMArtifact) {
				t.Fatalf("referrers of the index: %+v", rm.Manifests)
			}
			art, err := remote.Image(ref.Context().Digest(rm.Manifests[0].Digest.String()))
			if err != nil {
				t.Fatal(err)
			}
			assertSBOMArtifact(t, art, img)
		})
	}
}

func TestPushErrors(t *testing.T) {
	ref := name.MustParseReference(testRef).(name.Tag)
	if _, err := image.Push(context.Background(), t.TempDir(), ref); err == nil || !strings.Contains(err.Error(), "reading the OCI layout") {
		t.Errorf("pushing a folder that is no layout: err = %v", err)
	}
	// A registry that is not there: the error names the reference.
	img, _ := sharedImage(t)
	srv := httptest.NewServer(registry.New())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	dead, _ := name.NewTag(host + "/holdfast-dist/hello:v1")
	dir := filepath.Join(t.TempDir(), "hello")
	if err := img.WriteLayout(dir, dead); err != nil {
		t.Fatal(err)
	}
	if _, err := image.Push(context.Background(), dir, dead); err == nil || !strings.Contains(err.Error(), "pushing "+dead.String()) {
		t.Errorf("pushing to a closed registry: err = %v", err)
	}
}

func TestPushRefusesAnotherVersion(t *testing.T) {
	img, _ := sharedImage(t)
	dir := filepath.Join(t.TempDir(), "hello")
	if err := img.WriteLayout(dir, name.MustParseReference(testRef).(name.Tag)); err != nil {
		t.Fatal(err)
	}
	other, _ := name.NewTag("127.0.0.1:1/holdfast-dist/hello:v1.2.0-holdfast.4")
	if _, err := image.Push(context.Background(), dir, other); err == nil || !strings.Contains(err.Error(), "holds v1.2.0-holdfast.3, not v1.2.0-holdfast.4") {
		t.Errorf("err = %v", err)
	}
}
