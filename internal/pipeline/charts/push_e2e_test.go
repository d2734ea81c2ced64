//go:build e2e

package charts

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"sigs.k8s.io/yaml"
)

// TestPushAndPullThroughAnOCIRegistry pushes both charts with Push, as
// `holdfast charts push` does, to an in-process registry on 127.0.0.1, and
// pulls them back with helm: same bytes, same digest, same versions.
func TestPushAndPullThroughAnOCIRegistry(t *testing.T) {
	f := setup(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/holdfast-dist/charts"

	pushed, err := Push(t.Context(), f.helm, loadPins(t), filepath.Dir(f.karmada.Path), repo, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed) != len(Charts) {
		t.Fatalf("pushed %d charts, want %d", len(pushed), len(Charts))
	}
	// The cost of a pre-release chart version (see ChartVersion): helm
	// without --version wants a release and finds none, while a range with
	// a pre-release floor, as docs/charts.md tells users to write, finds it.
	t.Run("version ranges", func(t *testing.T) {
		ref := "oci://" + repo + "/karmada"
		if _, err := f.helm.Run(t.Context(), "show", "chart", ref, "--plain-http"); err == nil {
			t.Error("helm found a chart without --version; docs/charts.md says users must name one")
		}
		meta := f.helmOK(t, "show", "chart", ref, "--plain-http", "--version", ">=1.18.0-0 <1.19.0-0")
		if !strings.Contains(meta, "version: "+f.karmada.Version+"\n") {
			t.Errorf("range >=1.18.0-0 <1.19.0-0 found\n%s\nwant version %s", meta, f.karmada.Version)
		}
	})
	for i, c := range Charts {
		pkg := f.pkgs[c.Name]
		p := pushed[i]
		if want := repo + "/" + c.Name + ":" + pkg.Version; p.Ref != want {
			t.Errorf("pushed %s, want %s", p.Ref, want)
		}
		t.Run(c.Name, func(t *testing.T) {
			dest := t.TempDir()
			stdout, stderr, err := f.helm.run(t.Context(), "pull", "oci://"+repo+"/"+c.Name, "--version", pkg.Version, "--plain-http", "--destination", dest)
			if err != nil {
				t.Fatal(err)
			}
			if m := pushedDigest.FindSubmatch(append(stdout, stderr...)); m == nil || string(m[1]) != p.Digest {
				t.Errorf("helm pull says\n%s%s\nwant digest %s, the one the push reported", stdout, stderr, p.Digest)
			}
			got, err := os.ReadFile(filepath.Join(dest, filepath.Base(pkg.Path)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(pkg.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("pulled %s differs from the pushed archive", c.Name)
			}
			meta := f.helmOK(t, "show", "chart", "oci://"+repo+"/"+c.Name, "--version", pkg.Version, "--plain-http")
			var chart struct {
				Name       string `json:"name"`
				Version    string `json:"version"`
				AppVersion string `json:"appVersion"`
			}
			if err := yaml.Unmarshal([]byte(meta), &chart); err != nil {
				t.Fatal(err)
			}
			if chart.Name != c.Name || chart.Version != pkg.Version || chart.AppVersion != pkg.AppVersion {
				t.Errorf("registry serves %+v, want %s %s appVersion %s", chart, c.Name, pkg.Version, pkg.AppVersion)
			}
		})
	}
}
