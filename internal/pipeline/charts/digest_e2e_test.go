//go:build e2e

package charts

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild/imagebuildtest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// TestChartsDefaultToBuiltImageDigests: with image layouts present, Build
// packages charts whose Deployments pull holdfast's images by the layouts'
// index digests, through the real helm and each chart's own image helper
// (the Karmada chart's `common.images.image`, the worker chart's). The
// charts of the shared fixture, built without images, keep the tags (the
// other render tests).
func TestChartsDefaultToBuiltImageDigests(t *testing.T) {
	f := setup(t)
	pinFile, err := pins.Load(filepath.Join(f.root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	images := t.TempDir()
	digests := map[string]string{}
	for _, p := range []Package{f.karmada, f.operator} {
		up, err := pinFile.Upstream(p.Chart.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		d, err := imagebuildtest.WriteImages(images, up, p.Pin, "0123456789abcdef0123456789abcdef01234567", nil)
		if err != nil {
			t.Fatal(err)
		}
		for b, h := range d {
			digests[b] = h.String()
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "charts")
	pkgs, err := Build(ctx, Options{
		Pins:    pinFile,
		Trees:   pipeline.Config{Root: f.root, Out: filepath.Join(f.workDir, "trees")},
		Out:     out,
		Helm:    f.helm,
		Images:  images,
		ModTime: fixedTime,
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Package{}
	for _, p := range pkgs {
		byName[p.Chart.Name] = p
	}
	if err := VerifyDigests(pinFile, out, images); err != nil {
		t.Errorf("VerifyDigests on the charts Build wrote: %v", err)
	}
	if err := VerifyDigests(pinFile, filepath.Dir(f.karmada.Path), images); err == nil {
		t.Errorf("VerifyDigests took the charts built without images")
	}

	karmada := byName["karmada"]
	uv := karmada.Pin.Version
	for _, tc := range []struct {
		name   string
		args   []string
		images map[string]string // Deployment -> first container's image
	}{
		{
			name: "HA values",
			args: []string{"--values", f.path(karmadaHAValues)},
			images: map[string]string{
				"rel-controller-manager": "ghcr.io/holdfast-dist/karmada-controller-manager@" + digests["karmada-controller-manager"],
				"rel-search":             "ghcr.io/holdfast-dist/karmada-search@" + digests["karmada-search"],
				"rel-metrics-adapter":    "ghcr.io/holdfast-dist/karmada-metrics-adapter@" + digests["karmada-metrics-adapter"],
				"rel-scheduler":          "docker.io/karmada/karmada-scheduler:" + uv,
			},
		},
		{
			name: "mirror registry",
			args: []string{"--set", "global.imageRegistry=mirror.example.com"},
			images: map[string]string{
				"rel-controller-manager": "mirror.example.com/holdfast-dist/karmada-controller-manager@" + digests["karmada-controller-manager"],
				"rel-scheduler":          "mirror.example.com/karmada/karmada-scheduler:" + uv,
			},
		},
		{
			// docs/charts.md: rolling back to upstream's image also clears
			// the digest, which would otherwise win over the tag.
			name: "upstream image, digest cleared",
			args: []string{"--set", "controllerManager.image.registry=docker.io,controllerManager.image.repository=karmada/karmada-controller-manager," +
				"controllerManager.image.tag=" + uv + ",controllerManager.image.digest="},
			images: map[string]string{
				"rel-controller-manager": "docker.io/karmada/karmada-controller-manager:" + uv,
			},
		},
		{
			name: "upstream image, digest left",
			args: []string{"--set", "controllerManager.image.registry=docker.io,controllerManager.image.repository=karmada/karmada-controller-manager," +
				"controllerManager.image.tag=" + uv},
			images: map[string]string{
				"rel-controller-manager": "docker.io/karmada/karmada-controller-manager@" + digests["karmada-controller-manager"],
			},
		},
	} {
		t.Run("karmada "+tc.name, func(t *testing.T) {
			objs := f.render(t, karmada, karmadaNamespace, tc.args...)
			for name, want := range tc.images {
				d := objs.deployment(t, name)
				if got := d.Spec.Template.Spec.Containers[0].Image; got != want {
					t.Errorf("Deployment %s: image %s, want %s", name, got, want)
				}
			}
		})
	}

	operator := byName["worker-operator"]
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"default", "ghcr.io/holdfast-dist/worker-operator@" + digests["worker-operator"], nil},
		{"digest cleared, tag set", "ghcr.io/holdfast-dist/worker-operator:v9.9.9", []string{"--set", "image.digest=,image.tag=v9.9.9"}},
	} {
		t.Run("worker-operator "+tc.name, func(t *testing.T) {
			args := append([]string{"--values", f.path(workerPrimary)}, tc.args...)
			objs := f.render(t, operator, workerNamespace, args...)
			if got := container(t, objs.deployment(t, "kubeslice-operator"), "manager").Image; got != tc.want {
				t.Errorf("image %s, want %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, path, namespace, values string
	}{
		{"karmada", karmada.Path, karmadaNamespace, karmadaHAValues},
		{"worker-operator", operator.Path, workerNamespace, workerPrimary},
	} {
		t.Run("lint "+tc.name, func(t *testing.T) {
			out := f.helmOK(t, "lint", "--strict", tc.path, "--namespace", tc.namespace, "--values", f.path(tc.values))
			if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}
