package image_test

import (
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// upstreamUsers is the config User of each upstream's own image, read from
// its Dockerfile at the pinned versions. A user who swaps in holdfast's
// image keeps the upstream's manifests, and their securityContext was
// written for this user.
var upstreamUsers = map[string]string{
	// Karmada v1.16.0, v1.17.1, v1.18.2 cluster/images/Dockerfile: FROM
	// alpine, no USER. alpine's config sets none, so the config has no
	// User and the container runs as root.
	"karmada": "",
	// worker-operator v1.6.4 Dockerfile: FROM distroless static:nonroot,
	// USER 65532:65532.
	"workeroperator": "65532:65532",
}

// TestUpstreamImageUser builds every binary pins.txt lists with its
// upstream's Spec and checks the image runs as the upstream's image does:
// the same config User, and no file capability on any file. Upstream's
// manifests set allowPrivilegeEscalation: false (no_new_privs), under which
// the kernel refuses to exec a binary whose file capabilities it cannot
// grant ("operation not permitted"), where upstream's image runs; and a
// user other than upstream's can fail to read what upstream's can.
func TestUpstreamImageUser(t *testing.T) {
	needBinaries(t)
	pf, err := pins.Load(filepath.Join(repoRoot(t), pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range pf.Upstreams {
		want, ok := upstreamUsers[up.Name]
		if !ok {
			t.Errorf("upstream %s: no entry in upstreamUsers; read its Dockerfile's USER", up.Name)
			continue
		}
		spec, err := image.SpecFor(up.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range up.Build {
			binary := up.BinaryName(pkg)
			t.Run(binary, func(t *testing.T) {
				t.Parallel()
				in, err := newInputWith(t.TempDir(), spec, binary)
				if err != nil {
					t.Fatal(err)
				}
				img := build(t, in)
				for _, pi := range img.Platforms {
					cfg, err := pi.Image.ConfigFile()
					if err != nil {
						t.Fatal(err)
					}
					if cfg.Config.User != want {
						t.Errorf("%s: config User %q, want upstream's %q", pi.Platform, cfg.Config.User, want)
					}
					layers, err := pi.Image.Layers()
					if err != nil {
						t.Fatal(err)
					}
					byName := map[string]entry{}
					for _, l := range layers {
						for _, e := range layerEntries(t, l) {
							byName[e.hdr.Name] = e
							for k := range e.hdr.PAXRecords {
								// SCHILY.xattr.security.capability is the file
								// capability; no xattr at all is upstream's.
								if strings.HasPrefix(k, "SCHILY.xattr.") || strings.HasPrefix(k, "LIBARCHIVE.xattr.") {
									t.Errorf("%s: /%s carries %s, which upstream's image has not", pi.Platform, e.hdr.Name, k)
								}
							}
						}
					}
					assertAccount(t, byName, want)
				}
			})
		}
	}
}

// assertAccount checks that the user an image runs as has an /etc/passwd
// entry and a home folder it owns, as in the upstream's base image.
func assertAccount(t *testing.T, byName map[string]entry, user string) {
	t.Helper()
	uid := "0" // an empty User is root
	if user != "" {
		uid, _, _ = strings.Cut(user, ":")
	}
	var home string
	for _, line := range strings.Split(string(byName["etc/passwd"].data), "\n") {
		if f := strings.Split(line, ":"); len(f) == 7 && f[2] == uid {
			home = strings.TrimPrefix(f[5], "/")
		}
	}
	if home == "" {
		t.Errorf("/etc/passwd has no entry for uid %s:\n%s", uid, byName["etc/passwd"].data)
		return
	}
	h := byName[home+"/"].hdr
	if h == nil || strconv.Itoa(h.Uid) != uid {
		t.Errorf("home folder /%s of uid %s: %+v", home, uid, h)
	}
}

// newInputWith is input's image of testdata/hello, for the host platform
// only, named binary and laid out by spec.
func newInputWith(tree string, spec image.Spec, binary string) (image.Input, error) {
	in, err := newInput(tree)
	if err != nil {
		return in, err
	}
	in.Spec = spec
	in.Provenance.Binary = binary
	arch := runtime.GOARCH
	if testdataBinaries[arch] == "" {
		arch = "amd64"
	}
	in.Binaries = []image.Binary{{OS: "linux", Arch: arch, Path: testdataBinaries[arch]}}
	return in, nil
}
