package charts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// repoRoot is the holdfast repository the tests check the charts of.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func loadPins(t *testing.T) *pins.File {
	t.Helper()
	f, err := pins.Load(filepath.Join(repoRoot(t), pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestExpectedFollowsTheDefaultPins(t *testing.T) {
	f := loadPins(t)
	pkgs, err := Expected(f, "/out")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(Charts) {
		t.Fatalf("%d packages for %d charts", len(pkgs), len(Charts))
	}
	for _, p := range pkgs {
		up, err := f.Upstream(p.Chart.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		pin, _ := up.Pin("")
		if p.Pin != pin || p.Version != ChartVersion(pin) || p.AppVersion != pin.VersionString() {
			t.Errorf("%s: %+v, want the default pin %s", p.Chart.Name, p, pin.VersionString())
		}
		if want := filepath.Join("/out", p.Chart.Name+"-"+p.Version+".tgz"); p.Path != want {
			t.Errorf("%s: path %s, want %s", p.Chart.Name, p.Path, want)
		}
	}
}

// The worker-operator chart in the repository says which version it is,
// so that it reads as it ships; Build sets both from pins.txt anyway, and
// this catches a revision bump that forgot the chart.
func TestWorkerOperatorChartYAMLMatchesPins(t *testing.T) {
	pkgs, err := Expected(loadPins(t), "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(t), WorkerOperatorDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if p.Chart.Name != "worker-operator" {
			continue
		}
		for _, want := range []string{"\nversion: " + p.Version + "\n", "\nappVersion: " + p.AppVersion + "\n"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s/Chart.yaml lacks %q: update it to pins.txt's workeroperator pin", WorkerOperatorDir, strings.TrimSpace(want))
			}
		}
	}
}

func TestPushNeedsBuiltCharts(t *testing.T) {
	out := t.TempDir()
	_, err := Push(context.Background(), Helm{Path: "/nonexistent/helm"}, loadPins(t), out, "oci://127.0.0.1:1/charts", true)
	if err == nil || !strings.Contains(err.Error(), "holdfast charts build") || !strings.Contains(err.Error(), out) {
		t.Fatalf("err = %v, want it to name the missing archive and the build command", err)
	}
}

func TestOCIRegistry(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/holdfast-dist/charts":        "oci://ghcr.io/holdfast-dist/charts",
		"oci://ghcr.io/holdfast-dist/charts/": "oci://ghcr.io/holdfast-dist/charts",
		"127.0.0.1:5000":                      "oci://127.0.0.1:5000",
	} {
		if got := OCIRegistry(in); got != want {
			t.Errorf("OCIRegistry(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHelmErrorsNameTheCommand(t *testing.T) {
	_, err := Helm{}.Run(context.Background(), "version")
	if err == nil || !strings.Contains(err.Error(), "no helm binary") {
		t.Errorf("empty Path: err = %v", err)
	}
	// /bin/false stands in for a helm that fails.
	_, err = Helm{Path: "/bin/false"}.Run(context.Background(), "lint", "x")
	if err == nil || !strings.Contains(err.Error(), "helm lint x") {
		t.Errorf("failing helm: err = %v, want it to name the command", err)
	}
}

func TestPushRefusesCredentialsInTheRegistry(t *testing.T) {
	_, err := Helm{Path: "/nonexistent/helm"}.Push(context.Background(), Package{Path: "x.tgz"}, "oci://user:s3cret@ghcr.io/charts", false)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "helm registry login") {
		t.Fatalf("err = %v, want a refusal that does not repeat the password", err)
	}
}
