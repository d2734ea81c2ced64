package image_test

import (
	"crypto/x509"
	"encoding/pem"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"golang.org/x/mod/modfile"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

func build(t *testing.T, in image.Input) *image.Image {
	t.Helper()
	img, err := image.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestBuildIndex(t *testing.T) {
	img, in := sharedImage(t)
	if err := validate.Index(img.Index); err != nil {
		t.Fatalf("index does not validate: %v", err)
	}
	im, err := img.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s", im.MediaType)
	}
	want := in.Provenance.Annotations()
	if !maps.Equal(im.Annotations, want) {
		t.Errorf("index annotations\n got %v\nwant %v", im.Annotations, want)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		if d.MediaType != types.OCIManifestSchema1 {
			t.Errorf("%s: media type %s", d.Platform, d.MediaType)
		}
	}
	if got := strings.Join(platforms, " "); got != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %s, want linux/amd64 linux/arm64 in that order", got)
	}
}

func TestBuildPlatformImages(t *testing.T) {
	img, in := sharedImage(t)
	want := in.Provenance.Annotations()
	for _, pi := range img.Platforms {
		t.Run(pi.Platform.String(), func(t *testing.T) {
			if err := validate.Image(pi.Image); err != nil {
				t.Fatalf("image does not validate: %v", err)
			}
			m, err := pi.Image.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(m.Annotations, want) {
				t.Errorf("manifest annotations %v", m.Annotations)
			}
			if m.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("config media type %s", m.Config.MediaType)
			}
			cfg, err := pi.Image.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.OS != "linux" || cfg.Architecture != pi.Platform.Architecture {
				t.Errorf("config platform %s/%s", cfg.OS, cfg.Architecture)
			}
			if !cfg.Created.Time.Equal(created) {
				t.Errorf("created %v, want the fixed %v", cfg.Created, created)
			}
			c := cfg.Config
			if c.User != "65532:65532" || c.WorkingDir != "/" || !slices.Equal(c.Entrypoint, []string{"/bin/hello"}) || len(c.Cmd) != 0 {
				t.Errorf("user %q workdir %q entrypoint %q cmd %q", c.User, c.WorkingDir, c.Entrypoint, c.Cmd)
			}
			if !slices.Equal(c.Env, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "MANIFEST_PATH=/files/manifests"}) {
				t.Errorf("env %q", c.Env)
			}
			if !maps.Equal(c.Labels, want) {
				t.Errorf("labels %v", c.Labels)
			}
			for _, h := range cfg.History {
				if !h.Created.Time.Equal(created) {
					t.Errorf("history %q created %v", h.CreatedBy, h.Created)
				}
			}

			layers, err := pi.Image.Layers()
			if err != nil {
				t.Fatal(err)
			}
			if len(layers) != 3 || len(cfg.History) != 3 {
				t.Fatalf("%d layers and %d history entries, want 3 (rootfs, tree files, binary)", len(layers), len(cfg.History))
			}
			for i, l := range layers {
				if mt, _ := l.MediaType(); mt != types.OCILayer {
					t.Errorf("layer %d media type %s", i, mt)
				}
				var names []string
				for _, e := range layerEntries(t, l) {
					names = append(names, e.hdr.Name)
					if !e.hdr.ModTime.Equal(created) {
						t.Errorf("layer %d: %s has time %v", i, e.hdr.Name, e.hdr.ModTime)
					}
				}
				if !slices.IsSorted(names) {
					t.Errorf("layer %d entries not sorted: %v", i, names)
				}
			}
			assertRootfs(t, layerEntries(t, layers[0]))
			var tree []string
			for _, e := range layerEntries(t, layers[1]) {
				tree = append(tree, e.hdr.Name)
				if e.hdr.Uid != 0 || (e.hdr.Typeflag == '0' && e.hdr.Mode != 0o644) {
					t.Errorf("tree file %s: uid %d mode %o", e.hdr.Name, e.hdr.Uid, e.hdr.Mode)
				}
			}
			if got := strings.Join(tree, " "); got != "files/ files/manifests/ files/manifests/a.json files/manifests/b.json scripts/ scripts/cleanup.sh" {
				t.Errorf("tree files layer: %s", got)
			}
			bin := layerEntries(t, layers[2])
			if len(bin) != 2 || bin[0].hdr.Name != "bin/" || bin[1].hdr.Name != "bin/hello" {
				t.Fatalf("binary layer: %v", bin)
			}
			wantBin, err := os.ReadFile(testdataBinaries[pi.Platform.Architecture])
			if err != nil {
				t.Fatal(err)
			}
			if h := bin[1].hdr; h.Mode != 0o755 || h.Uid != 0 || string(bin[1].data) != string(wantBin) {
				t.Errorf("bin/hello: mode %o uid %d, %d bytes (want the %s binary)", h.Mode, h.Uid, len(bin[1].data), pi.Platform.Architecture)
			}
			if len(bin[1].hdr.PAXRecords) != 0 {
				t.Errorf("bin/hello: PAX records %q", bin[1].hdr.PAXRecords)
			}
		})
	}
	// The layers every platform shares are stored once.
	l0, _ := img.Platforms[0].Image.Layers()
	l1, _ := img.Platforms[1].Image.Layers()
	for i := range 2 {
		if digest(t, l0[i]) != digest(t, l1[i]) {
			t.Errorf("layer %d differs between platforms", i)
		}
	}
}

func assertRootfs(t *testing.T, entries []entry) {
	t.Helper()
	byName := map[string]entry{}
	for _, e := range entries {
		byName[e.hdr.Name] = e
	}
	passwd := string(byName["etc/passwd"].data)
	if !strings.Contains(passwd, "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", passwd)
	}
	if !strings.Contains(string(byName["etc/group"].data), "nonroot:x:65532:") {
		t.Error("/etc/group has no group 65532")
	}
	if h := byName["tmp/"].hdr; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v", h)
	}
	if h := byName["home/nonroot/"].hdr; h == nil || h.Uid != 65532 || h.Mode != 0o700 {
		t.Errorf("/home/nonroot: %+v", h)
	}
	if !strings.HasPrefix(passwd, "root:x:0:0:root:/root:") {
		t.Errorf("/etc/passwd does not start with root:\n%s", passwd)
	}
	if h := byName["root/"].hdr; h == nil || h.Uid != 0 || h.Mode != 0o700 {
		t.Errorf("/root: %+v", h)
	}
	if string(byName["usr/share/zoneinfo/Europe/Paris"].data) != "TZif-paris" {
		t.Error("time zone Europe/Paris missing from usr/share/zoneinfo")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(byName["etc/ssl/certs/ca-certificates.crt"].data) {
		t.Error("the CA bundle holds no certificate")
	}
}

func TestCABundle(t *testing.T) {
	data, err := image.CABundle()
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", goMod, nil)
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, r := range mf.Require {
		if r.Mod.Path == "golang.org/x/crypto/x509roots/fallback" {
			version = r.Mod.Version
		}
	}
	if want := "# Mozilla NSS root certificates from golang.org/x/crypto/x509roots/fallback " + version + ":\n"; version == "" || !strings.HasPrefix(string(data), want) {
		t.Errorf("header does not name the module at go.mod's version %q (bump caBundleVersion with go.mod):\n%.200s", version, data)
	}
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("certificate %d: %v", n, err)
		}
		if !cert.IsCA {
			t.Errorf("%s is not a CA", cert.Subject)
		}
		// The distrusted-after roots are left out (see CABundle).
		if strings.Contains(cert.Subject.String(), "AffirmTrust") || strings.Contains(cert.Subject.String(), "Entrust Root Certification Authority") {
			t.Errorf("%s has a distrust-after date and must be left out", cert.Subject)
		}
		n++
	}
	// NSS has carried 130-150 roots for years; far fewer means a broken read.
	if n < 100 {
		t.Errorf("%d roots, want the NSS store (over 100)", n)
	}
	again, _ := image.CABundle()
	if string(again) != string(data) {
		t.Error("two calls give different bundles")
	}
}

// TestReproducible builds the same image twice (same digest), then changes
// one input at a time: each must change the digest. One platform keeps it
// cheap; adding the second is one of the changes.
func TestReproducible(t *testing.T) {
	onePlatform := func(t *testing.T) image.Input {
		in := input(t)
		in.Binaries = in.Binaries[1:]
		return in
	}
	base := onePlatform(t)
	want := digest(t, build(t, base).Index)
	if got := digest(t, build(t, onePlatform(t)).Index); got != want {
		t.Fatalf("same inputs, digests %s and %s", want, got)
	}
	tests := []struct {
		name   string
		change func(*image.Input)
	}{
		{"series hash", func(in *image.Input) { in.Provenance.SeriesHash = "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" }},
		{"revision", func(in *image.Input) { in.Provenance.Revision = "0000000000" }},
		{"date", func(in *image.Input) { in.Provenance.Created = created.AddDate(0, 0, 1) }},
		{"a second platform", func(in *image.Input) { in.Binaries = input(t).Binaries }},
		{"entrypoint", func(in *image.Input) { in.Spec.Entrypoint = nil }},
		{"user", func(in *image.Input) { in.Spec.User = "" }},
		{"time zones", func(in *image.Input) { in.ZoneInfo = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := onePlatform(t)
			tt.change(&in)
			if got := digest(t, build(t, in).Index); got == want {
				t.Errorf("changing the %s left the digest %s", tt.name, got)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*image.Input)
		wantErr string
	}{
		{"binary for another platform", func(in *image.Input) { in.Binaries[0].Path = testdataBinaries["amd64"] }, "is built for linux/amd64, not linux/arm64"},
		{"platform twice", func(in *image.Input) { in.Binaries[0].Arch = "amd64" }, "two binaries for linux/amd64"},
		{"no binary", func(in *image.Input) { in.Binaries = nil }, "image hello: no binary"},
		{"missing binary", func(in *image.Input) { in.Binaries[1].Path += ".missing" }, "no such file"},
		{"not a Go binary", func(in *image.Input) { in.Binaries[1].Path = in.Tree + "/scripts/cleanup.sh" }, "reading its Go build information"},
		{"missing tree folder", func(in *image.Input) { in.Spec.TreeFiles = []string{"files", "charts"} }, "tree files charts"},
		{"no date", func(in *image.Input) { in.Provenance.Created = time.Time{} }, "Created is unset"},
		{"no series hash", func(in *image.Input) { in.Provenance.SeriesHash = "" }, "SeriesHash is empty"},
		{"no licence finder", func(in *image.Input) { in.Licenses = nil }, "SBOM of hello: no licence finder"},
		{"bad time zone database", func(in *image.Input) { in.ZoneInfo = []byte("not a zip") }, "reading the time zone database"},
		{"time zone escaping", func(in *image.Input) { in.ZoneInfo, _ = zipOf(map[string]string{"../etc/passwd": "x"}) }, "is not a clean relative path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(t)
			tt.change(&in)
			_, err := image.Build(in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
