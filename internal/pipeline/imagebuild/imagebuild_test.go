package imagebuild_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// The real images are built, pushed and pulled back by cmd/holdfast's
// TestImagesRealUpstreams, through the commands that call this package.

func TestReference(t *testing.T) {
	tests := []struct {
		registry, binary, version string
		opts                      []name.Option
		want, wantErr             string
	}{
		{"", "karmada-search", "v1.18.2-holdfast.2", nil, "ghcr.io/holdfast-dist/karmada-search:v1.18.2-holdfast.2", ""},
		{"registry.example.com:5000/team/", "worker-operator", "v1.6.4-holdfast.1", nil, "registry.example.com:5000/team/worker-operator:v1.6.4-holdfast.1", ""},
		{"127.0.0.1:5000", "worker-operator", "v1.6.4-holdfast.1", []name.Option{name.Insecure}, "127.0.0.1:5000/worker-operator:v1.6.4-holdfast.1", ""},
		{"Registry With Spaces", "x", "v1", nil, "", `image reference for x in registry "Registry With Spaces"`},
		{"ghcr.io/holdfast-dist", "x", "v1+build", nil, "", "image reference for x"},
	}
	for _, tt := range tests {
		ref, err := imagebuild.Reference(tt.registry, tt.binary, tt.version, tt.opts...)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Reference(%q, %q, %q): err = %v, want %q", tt.registry, tt.binary, tt.version, err, tt.wantErr)
			}
			continue
		}
		if err != nil || ref.String() != tt.want {
			t.Errorf("Reference(%q, %q, %q) = %v, %v; want %s", tt.registry, tt.binary, tt.version, ref, err, tt.want)
		}
	}
}

func TestBinariesAndPaths(t *testing.T) {
	up := &pins.Upstream{
		Name:     "karmada",
		Build:    []string{"./cmd/controller-manager", "./cmd/karmada-search"},
		Binaries: map[string]string{"./cmd/controller-manager": "karmada-controller-manager"},
	}
	all, err := imagebuild.Binaries(up, nil)
	if err != nil || !slices.Equal(all, []string{"karmada-controller-manager", "karmada-search"}) {
		t.Errorf("Binaries = %v, %v", all, err)
	}
	if only, err := imagebuild.Binaries(up, []string{"karmada-search"}); err != nil || !slices.Equal(only, []string{"karmada-search"}) {
		t.Errorf("Binaries(only karmada-search) = %v, %v", only, err)
	}
	if _, err := imagebuild.Binaries(up, []string{"karmada-agent"}); err == nil || !strings.Contains(err.Error(), `builds no binary "karmada-agent" (it builds karmada-controller-manager, karmada-search)`) {
		t.Errorf("an unknown binary: err = %v", err)
	}
	if got, want := imagebuild.LayoutDir("out", up, "v1.18.2", "karmada-search"), filepath.Join("out", "karmada-v1.18.2", "karmada-search"); got != want {
		t.Errorf("LayoutDir = %s, want %s", got, want)
	}
}
