package imagebuild_test

import (
	"os"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild/imagebuildtest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// fakeImages writes what imagebuild.Build leaves (imagebuildtest); the
// images' content does not matter to Verify.
func fakeImages(t *testing.T, out string, up *pins.Upstream, version, revision, treeState string, platforms []build.Platform) {
	t.Helper()
	if _, err := imagebuildtest.WriteImagesOfTree(out, up, pins.Pin{Version: version}, revision, treeState, platforms); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	up := &pins.Upstream{
		Name:     "karmada",
		Build:    []string{"./cmd/controller-manager", "./cmd/karmada-search"},
		Binaries: map[string]string{"./cmd/controller-manager": "karmada-controller-manager"},
	}
	const version, head = "v1.18.2", "0123456789abcdef0123456789abcdef01234567"
	amd64 := []build.Platform{{OS: "linux", Arch: "amd64"}}

	tests := []struct {
		name      string
		setup     func(t *testing.T, out string)
		platforms []build.Platform
		wantErr   string
	}{
		{
			name:  "every image, of this commit, every platform",
			setup: func(t *testing.T, out string) { fakeImages(t, out, up, version, head, "clean", build.DefaultPlatforms) },
		},
		{
			name:    "no images at all",
			setup:   func(t *testing.T, out string) {},
			wantErr: "image karmada-controller-manager of karmada v1.18.2: no OCI layout at",
		},
		{
			name: "images of another commit",
			setup: func(t *testing.T, out string) {
				fakeImages(t, out, up, version, "fedcba", "clean", build.DefaultPlatforms)
			},
			wantErr: `built from holdfast commit "fedcba", not ` + head,
		},
		{
			name:    "images of a dirty checkout",
			setup:   func(t *testing.T, out string) { fakeImages(t, out, up, version, head, "dirty", build.DefaultPlatforms) },
			wantErr: `built from a "dirty" checkout`,
		},
		{
			name:    "a single-platform build",
			setup:   func(t *testing.T, out string) { fakeImages(t, out, up, version, head, "clean", amd64) },
			wantErr: "has no linux/arm64 image (it has linux/amd64) (run `make images`)",
		},
		{
			name:      "a single-platform build, when only that is asked for",
			setup:     func(t *testing.T, out string) { fakeImages(t, out, up, version, head, "clean", amd64) },
			platforms: amd64,
		},
		{
			name: "one binary's SBOM is missing",
			setup: func(t *testing.T, out string) {
				fakeImages(t, out, up, version, head, "clean", build.DefaultPlatforms)
				if err := os.Remove(imagebuild.SBOMPath(out, up, version, "karmada-search")); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "image karmada-search of karmada v1.18.2: has no SBOM",
		},
		{
			name: "one binary's CycloneDX SBOM is missing",
			setup: func(t *testing.T, out string) {
				fakeImages(t, out, up, version, head, "clean", build.DefaultPlatforms)
				if err := os.Remove(imagebuild.CycloneDXPath(out, up, version, "karmada-controller-manager")); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "image karmada-controller-manager of karmada v1.18.2: has no CycloneDX SBOM",
		},
		{
			name: "one platform's tarball is missing",
			setup: func(t *testing.T, out string) {
				fakeImages(t, out, up, version, head, "clean", build.DefaultPlatforms)
				if err := os.Remove(imagebuild.TarballPath(out, up, version, "karmada-search", build.Platform{OS: "linux", Arch: "arm64"})); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "image karmada-search of karmada v1.18.2: has no linux/arm64 tarball",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			tt.setup(t, out)
			err := imagebuild.Verify(out, up, version, head, tt.platforms)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify: err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
