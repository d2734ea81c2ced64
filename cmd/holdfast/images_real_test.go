package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/mod/module"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// repoRoot is holdfast's repository, two levels up from this package.
const repoRoot = "../.."

// TestImagesRealUpstreams runs `holdfast images build` and `images push`
// on the real default pins, into go-containerregistry's registry on
// 127.0.0.1, then pulls the images back and checks them: worker-operator
// for both platforms, karmada-controller-manager for the host platform
// only (a cold arm64 Karmada compile takes ~10 minutes on 2 cores, and the
// platform handling is the code worker-operator exercises).
//
// The commands run as a separate holdfast binary, as `make images` runs
// them: compressing 100 MB binaries inside a test binary built with -race
// takes minutes instead of seconds. The go command's cache makes a second
// run cheap. Skipped with -short.
func TestImagesRealUpstreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real upstream binaries; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the host platform's binary is run from the image: needs linux")
	}
	pf, err := pins.Load(filepath.Join(repoRoot, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	source, err := build.ReadSource(context.Background(), repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	holdfast := filepath.Join(t.TempDir(), "holdfast")
	if out, err := exec.Command("go", "build", "-o", holdfast, ".").CombinedOutput(); err != nil {
		t.Fatalf("building holdfast: %v\n%s", err, out)
	}
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	reg := strings.TrimPrefix(srv.URL, "http://") + "/holdfast-dist"
	// The trees are the test's own: a tree's key holds the hash of the
	// holdfast binary that built it, and this one must not replace the
	// trees under _output/trees.
	trees := t.TempDir()

	host := build.Platform{OS: "linux", Arch: runtime.GOARCH}
	cases := []struct {
		upstream, binary string
		platforms        []build.Platform
		// versionArgs make the binary print its version: Karmada's have
		// a version subcommand and no --version flag.
		versionArgs []string
	}{
		{"workeroperator", "worker-operator", build.DefaultPlatforms, []string{"--version"}},
		{"karmada", "karmada-controller-manager", []build.Platform{host}, []string{"version"}},
	}
	for _, c := range cases {
		t.Run(c.binary, func(t *testing.T) {
			up, err := pf.Upstream(c.upstream)
			if err != nil {
				t.Fatal(err)
			}
			pin, err := up.Pin("")
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			stdout := runHoldfast(t, holdfast, "images", "build", "--root", repoRoot, "--upstream", c.upstream, "--only", c.binary,
				"--platforms", platformList(c.platforms), "--registry", reg, "--out", out, "--bin", t.TempDir(), "--trees", trees)
			built := refDigest(t, stdout)
			for _, f := range []string{c.binary, c.binary + ".spdx.json", c.binary + ".cdx.json"} {
				if _, err := os.Stat(filepath.Join(out, c.upstream+"-"+pin.Version, f)); err != nil {
					t.Error(err)
				}
			}
			for _, p := range c.platforms {
				if _, err := os.Stat(filepath.Join(out, c.upstream+"-"+pin.Version, c.binary+"-"+p.OS+"-"+p.Arch+".tar")); err != nil {
					t.Error(err)
				}
			}
			pushed := refDigest(t, runHoldfast(t, holdfast, "images", "push", "--root", repoRoot, "--upstream", c.upstream, "--only", c.binary,
				"--registry", reg, "--out", out, "--plain-http"))
			if pushed != built {
				t.Fatalf("pushed %s, built %s", pushed, built)
			}
			ref, err := name.NewDigest(pushed, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			tag, err := name.NewTag(reg+"/"+c.binary+":"+pin.VersionString(), name.Insecure)
			if err != nil {
				t.Fatal(err)
			}

			tree, err := pipeline.Config{Root: repoRoot, Out: trees}.Build(context.Background(), up, pin, provenance.Patched)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := image.SpecFor(up.Name)
			if err != nil {
				t.Fatal(err)
			}
			checkPulled(t, spec, tag, ref, c.platforms, image.Provenance{
				Binary: c.binary, Version: tree.Record.HoldfastVersion, UpstreamModule: up.Module, UpstreamVersion: pin.Version,
				SeriesHash: tree.Record.SeriesHash, Revision: source.Commit, TreeState: source.TreeState,
				Source: "https://github.com/holdfast-dist/holdfast", Created: source.Date,
			}, c.versionArgs)
		})
	}
}

func runHoldfast(t *testing.T, holdfast string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(holdfast, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("holdfast %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// refDigest finds the one REF@sha256:... line the images commands print
// per image.
func refDigest(t *testing.T, stdout string) string {
	t.Helper()
	var found []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, " ") && strings.Contains(line, "@sha256:") {
			found = append(found, line)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one REF@DIGEST line, got %q in:\n%s", found, stdout)
	}
	return found[0]
}

// checkPulled pulls the image by tag and checks it, then runs the host
// platform's binary from its layer.
// upstreamImageUser is the config User of each upstream's own image, by
// module: what their manifests' securityContext is written for.
var upstreamImageUser = map[string]string{
	// cluster/images/Dockerfile: FROM alpine, no USER (root).
	"github.com/karmada-io/karmada": "",
	// Dockerfile: distroless static:nonroot, USER 65532:65532.
	"github.com/kubeslice/worker-operator": "65532:65532",
}

func checkPulled(t *testing.T, spec image.Spec, tag name.Tag, want name.Digest, platforms []build.Platform, p image.Provenance, versionArgs []string) {
	t.Helper()
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d.String() != want.DigestStr() {
		t.Fatalf("the tag %s pulls %s, pushed %s", tag, d, want.DigestStr())
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range p.Annotations() {
		if im.Annotations[k] != v {
			t.Errorf("index annotation %s = %q, want %q", k, im.Annotations[k], v)
		}
	}
	var got, wantPlatforms []string
	for _, d := range im.Manifests {
		got = append(got, d.Platform.String())
	}
	for _, pl := range platforms {
		wantPlatforms = append(wantPlatforms, pl.String())
	}
	if slices.Sort(wantPlatforms); !slices.Equal(got, wantPlatforms) {
		t.Errorf("platforms %v, want %v", got, wantPlatforms)
	}

	var hostImage v1.Image
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		wantUser, ok := upstreamImageUser[p.UpstreamModule]
		if !ok {
			t.Fatalf("%s: no entry in upstreamImageUser; read its Dockerfile's USER", p.UpstreamModule)
		}
		if cfg.Config.User != wantUser || !slices.Equal(cfg.Config.Entrypoint, spec.Entrypoint) {
			t.Errorf("%s: user %q entrypoint %q, want upstream's user %q", d.Platform, cfg.Config.User, cfg.Config.Entrypoint, wantUser)
		}
		if cfg.OS+"/"+cfg.Architecture != d.Platform.String() {
			t.Errorf("%s: config says %s/%s", d.Platform, cfg.OS, cfg.Architecture)
		}
		// By inspection, so that the platform this machine cannot run
		// (arm64) is checked too: the binary is where upstream's manifests
		// start it, static, built for the platform, executable by the
		// image's user, with no file capability.
		if err := image.CheckRunnable(img, spec.BinaryPath(p.Binary), cfg.Config.User); err != nil {
			t.Errorf("%s: %v", d.Platform, err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.Annotations[image.AnnotationSeries] != p.SeriesHash || cfg.Config.Labels[image.AnnotationVersion] != p.Version {
			t.Errorf("%s: manifest annotations %v, labels %v", d.Platform, m.Annotations, cfg.Config.Labels)
		}
		if d.Platform.Architecture == runtime.GOARCH {
			hostImage = img
		}
	}

	refs, err := remote.Referrers(want)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Manifests) != 1 || rm.Manifests[0].ArtifactType != image.SBOMMediaType {
		t.Fatalf("referrers %+v, want one SBOM", rm.Manifests)
	}
	art, err := remote.Image(want.Context().Digest(rm.Manifests[0].Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	layers, err := art.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("SBOM layers %v, %v", layers, err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	var doc image.SPDXDocument
	err = json.NewDecoder(rc).Decode(&doc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Both upstreams are Apache-2.0, read from the pristine module in the
	// module cache the build filled; the version is the one the binary
	// records, a pseudo-version after the pinned tag.
	mainModule := slices.ContainsFunc(doc.Packages, func(pkg image.SPDXPackage) bool {
		base, err := module.PseudoVersionBase(pkg.VersionInfo)
		return pkg.Name == p.UpstreamModule && err == nil && base == p.UpstreamVersion && pkg.LicenseDeclared == "Apache-2.0"
	})
	// Both upstreams link well over a hundred modules; a few means a
	// broken read of the build information.
	if doc.SPDXVersion != "SPDX-2.3" || !mainModule || len(doc.Packages) < 50 {
		t.Errorf("SBOM %q: %d packages, main module %s after %s listed as Apache-2.0: %v", doc.Name, len(doc.Packages), p.UpstreamModule, p.UpstreamVersion, mainModule)
	}

	if hostImage == nil {
		t.Fatalf("no linux/%s image", runtime.GOARCH)
	}
	binary := extractBinary(t, hostImage, strings.TrimPrefix(spec.BinaryPath(p.Binary), "/"))
	out, err := exec.Command(binary, versionArgs...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", p.Binary, versionArgs, err, out)
	}
	if !bytes.Contains(out, []byte(p.Version)) {
		t.Errorf("%s %s printed %q, want the holdfast version %s", p.Binary, versionArgs, out, p.Version)
	}
}

// extractBinary unpacks one file of the image's last layer with tar(1):
// the layer blob is copied as it is (go-containerregistry checks its digest
// while reading) and decompressed outside the test process, which the race
// detector would slow down by minutes for a 100 MB binary.
func extractBinary(t *testing.T, img v1.Image, path string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[len(layers)-1].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	dir := t.TempDir()
	blob := filepath.Join(dir, "layer.tar.gz")
	f, err := os.Create(blob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xzf", blob, "-C", dir, path).CombinedOutput(); err != nil {
		t.Fatalf("extracting %s from the layer: %v\n%s", path, err, out)
	}
	return filepath.Join(dir, filepath.FromSlash(path))
}
