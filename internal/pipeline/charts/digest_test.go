package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild/imagebuildtest"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// karmadaValues is the shape of the patched Karmada chart's image blocks
// (0003-chart-holdfast-images-and-guard-flags): no digest key.
const karmadaValues = `holdfastImageVersion: &holdfastImageVersion v1.18.2-holdfast.3
controllerManager:
  image:
    registry: ghcr.io
    repository: holdfast-dist/karmada-controller-manager
    tag: *holdfastImageVersion
    pullPolicy: IfNotPresent
    ## Optionally specify an array of imagePullSecrets.
    pullSecrets: []
  replicaCount: 1
scheduler:
  image:
    registry: docker.io
    repository: karmada/karmada-scheduler
`

func TestSetImageDigests(t *testing.T) {
	worker, err := os.ReadFile(filepath.Join(repoRoot(t), WorkerOperatorDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, values string
		digests      map[string]string
		want         map[string]string // binary -> digest read back
		wantLine     string
		wantErr      string
	}{
		{
			name: "karmada: a digest key after repository", values: karmadaValues,
			digests:  map[string]string{"karmada-controller-manager": digestA},
			want:     map[string]string{"karmada-controller-manager": digestA},
			wantLine: "    repository: holdfast-dist/karmada-controller-manager\n    digest: \"" + digestA + "\"\n    tag: *holdfastImageVersion\n",
		},
		{
			name: "worker-operator: its digest key set", values: string(worker),
			digests:  map[string]string{"worker-operator": digestB},
			want:     map[string]string{"worker-operator": digestB},
			wantLine: "  digest: \"" + digestB + "\"\n  pullPolicy: IfNotPresent\n",
		},
		{
			name: "a digest set again is replaced", values: strings.Replace(karmadaValues, "    tag:", "    digest: \""+digestA+"\"\n    tag:", 1),
			digests: map[string]string{"karmada-controller-manager": digestB},
			want:    map[string]string{"karmada-controller-manager": digestB},
		},
		{
			name: "a nested block's digest is not the image's", values: "x:\n  image:\n    repository: holdfast-dist/b\n    sub:\n      digest: keep\n  digest: other\n",
			digests:  map[string]string{"b": digestA},
			want:     map[string]string{"b": digestA},
			wantLine: "      digest: keep\n  digest: other\n",
		},
		{
			name: "no such image", values: karmadaValues,
			digests: map[string]string{"karmada-search": digestA},
			wantErr: "image holdfast-dist/karmada-search: no `repository: holdfast-dist/karmada-search` line",
		},
		{
			name: "two blocks of one image", values: karmadaValues + "other:\n  image:\n    repository: holdfast-dist/karmada-controller-manager\n",
			digests: map[string]string{"karmada-controller-manager": digestA},
			wantErr: "more than one",
		},
		{
			name: "not a digest", values: karmadaValues,
			digests: map[string]string{"karmada-controller-manager": "latest"},
			wantErr: `"latest" is not a sha256 digest`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"values.yaml": tc.values})
			err := SetImageDigests(dir, tc.digests)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), tc.wantLine) {
				t.Errorf("values.yaml lacks\n%s\n---\n%s", tc.wantLine, got)
			}
			var v any
			if err := yaml.UnmarshalStrict(got, &v); err != nil {
				t.Fatalf("values.yaml no longer strict YAML (a duplicate key?): %v\n%s", err, got)
			}
			archive := filepath.Join(dir, "c.tgz")
			writeHelmLikeArchive(t, archive, time.Unix(0, 0), [][2]string{{"c/Chart.yaml", "name: c\n"}, {"c/values.yaml", string(got)}})
			read, err := ArchiveImageDigests(archive)
			if err != nil {
				t.Fatal(err)
			}
			for b, want := range tc.want {
				if read[b] != want {
					t.Errorf("digest of %s read back %q, want %q", b, read[b], want)
				}
			}
		})
	}
}

func TestImageDigestsAllOrNone(t *testing.T) {
	f := loadPins(t)
	up, err := f.Upstream("karmada")
	if err != nil {
		t.Fatal(err)
	}
	pin, err := up.Pin("")
	if err != nil {
		t.Fatal(err)
	}
	images := t.TempDir()
	if d, err := imageDigests(images, up, pin); err != nil || d != nil {
		t.Fatalf("no images: %v, %v; want tags (nil, no error)", d, err)
	}
	want, err := imagebuildtest.WriteImages(images, up, pin, "c0ffee", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := imageDigests(images, up, pin)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 5 {
		t.Errorf("digests %v, want the five karmada images", d)
	}
	for b, h := range want {
		if d[b] != h.String() {
			t.Errorf("%s: %s, want the layout's %s", b, d[b], h)
		}
	}
	if err := os.RemoveAll(filepath.Join(images, "karmada-v1.18.2", "karmada-search")); err != nil {
		t.Fatal(err)
	}
	if _, err := imageDigests(images, up, pin); err == nil || !strings.Contains(err.Error(), "partial: no OCI layout for karmada-search") {
		t.Errorf("one image missing: err = %v, want partial naming karmada-search", err)
	}
	older := pin
	older.Revision--
	if _, err := imagebuildtest.WriteImages(images, up, older, "c0ffee", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := imageDigests(images, up, pin); err == nil || !strings.Contains(err.Error(), "not "+pin.VersionString()) {
		t.Errorf("images of an older revision: err = %v, want one naming the version", err)
	}
}

// TestVerifyDigests is the release gate: every packaged chart pins the
// built images' digests.
func TestVerifyDigests(t *testing.T) {
	f := loadPins(t)
	images := t.TempDir()
	built := map[string]string{}
	for _, name := range []string{"karmada", "workeroperator"} {
		up, err := f.Upstream(name)
		if err != nil {
			t.Fatal(err)
		}
		pin, err := up.Pin("")
		if err != nil {
			t.Fatal(err)
		}
		d, err := imagebuildtest.WriteImages(images, up, pin, "c0ffee", nil)
		if err != nil {
			t.Fatal(err)
		}
		for b, h := range d {
			built[b] = h.String()
		}
	}
	pkgs, err := Expected(f, "")
	if err != nil {
		t.Fatal(err)
	}
	karmada := func(cm string) string {
		return "controllerManager:\n  image:\n    repository: holdfast-dist/karmada-controller-manager\n    digest: \"" + cm + "\"\n" +
			"search:\n  image:\n    repository: holdfast-dist/karmada-search\n    digest: \"" + built["karmada-search"] + "\"\n" +
			"metricsAdapter:\n  image:\n    repository: holdfast-dist/karmada-metrics-adapter\n    digest: \"" + built["karmada-metrics-adapter"] + "\"\n" +
			"schedulerEstimator:\n  image:\n    repository: holdfast-dist/karmada-scheduler-estimator\n    digest: \"" + built["karmada-scheduler-estimator"] + "\"\n" +
			"agent:\n  image:\n    repository: holdfast-dist/karmada-agent\n    digest: \"" + built["karmada-agent"] + "\"\n" +
			"scheduler:\n  image:\n    repository: karmada/karmada-scheduler\n"
	}
	worker := "image:\n  repository: holdfast-dist/worker-operator\n  digest: \"" + built["worker-operator"] + "\"\n"
	for _, tc := range []struct {
		name, karmada, worker, wantErr string
	}{
		{"every digest built", karmada(built["karmada-controller-manager"]), worker, ""},
		{"a tag", karmada(""), worker, "chart karmada " + pkgs[0].Version + " pulls image karmada-controller-manager by tag, not by the built digest " + built["karmada-controller-manager"]},
		{"another build", karmada(digestA), worker, "pins image karmada-controller-manager to " + digestA + ", not the built " + built["karmada-controller-manager"]},
		{"an image not built", karmada(built["karmada-controller-manager"]), worker + "x:\n  repository: holdfast-dist/other\n", "names image holdfast-dist/other"},
		{"an image missing", karmada(built["karmada-controller-manager"]), "image:\n  repository: x/y\n", "has no image holdfast-dist/worker-operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			for _, p := range pkgs {
				values := map[string]string{"karmada": tc.karmada, "worker-operator": tc.worker}[p.Chart.Name]
				writeHelmLikeArchive(t, filepath.Join(out, filepath.Base(p.Path)), time.Unix(0, 0), [][2]string{
					{p.Chart.Name + "/Chart.yaml", "name: " + p.Chart.Name + "\n"},
					{p.Chart.Name + "/charts/common/values.yaml", "image:\n  repository: holdfast-dist/decoy\n"},
					{p.Chart.Name + "/values.yaml", values},
				})
			}
			err := VerifyDigests(f, out, images)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if err := VerifyDigests(f, t.TempDir(), images); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("no charts: err = %v", err)
	}
}
