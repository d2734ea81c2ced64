//go:build e2e

package charts

// These tests run the real helm (internal/toolcache builds it once into .cache/tools)
// on the charts Build packages, and install them into a real kube-apiserver
// (internal/harness/controlplane). `make charts-test` runs them.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// fixture is what every test here shares: helm and the packaged charts,
// built once per test binary (a few seconds warm; see docs/charts.md for
// the cold cost).
type fixture struct {
	helm     Helm
	pkgs     map[string]Package // by chart name
	root     string             // the holdfast repository
	workDir  string
	karmada  Package
	operator Package
}

var (
	sharedOnce sync.Once
	shared     *fixture
	sharedErr  error
	// sharedDir is removed by TestMain once every test is done.
	sharedDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// fixedTime stands in for the commit time Build stamps archives with.
var fixedTime = time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC)

func setup(t *testing.T) *fixture {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = buildFixture() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func buildFixture() (*fixture, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root, err := toolcache.Root()
	if err != nil {
		return nil, err
	}
	helmPath, err := toolcache.Ensure(ctx, root, toolcache.Helm)
	if err != nil {
		return nil, err
	}
	if sharedDir, err = os.MkdirTemp("", "holdfast-charts-test-"); err != nil {
		return nil, err
	}
	// helm keeps its caches, repositories and registry logins under these:
	// the tests must neither read nor change the user's.
	env := append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(sharedDir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(sharedDir, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(sharedDir, "helm", "data"),
		"KUBECONFIG="+filepath.Join(sharedDir, "no-kubeconfig"),
	)
	f := &fixture{helm: Helm{Path: helmPath, Env: env}, root: root, workDir: sharedDir, pkgs: map[string]Package{}}
	pinFile, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		return nil, err
	}
	// Private trees: the test binary is a different holdfast executable, so
	// it would rebuild the shared _output/trees under other runs' feet.
	pkgs, err := Build(ctx, Options{
		Pins:    pinFile,
		Trees:   pipeline.Config{Root: root, Out: filepath.Join(sharedDir, "trees")},
		Out:     filepath.Join(sharedDir, "charts"),
		Helm:    f.helm,
		ModTime: fixedTime,
	})
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		f.pkgs[p.Chart.Name] = p
	}
	f.karmada, f.operator = f.pkgs["karmada"], f.pkgs["worker-operator"]
	return f, nil
}

// helmOK runs helm and fails the test on an error.
func (f *fixture) helmOK(t *testing.T, args ...string) string {
	t.Helper()
	out, err := f.helm.Run(t.Context(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// render runs `helm template` and returns the objects by kind/name.
func (f *fixture) render(t *testing.T, pkg Package, namespace string, args ...string) objects {
	t.Helper()
	out := f.helmOK(t, append([]string{"template", "rel", pkg.Path, "--namespace", namespace}, args...)...)
	objs, err := decodeObjects([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// objects are rendered manifests keyed by "Kind/name".
type objects map[string][]byte

func decodeObjects(docs []byte) (objects, error) {
	objs := objects{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(docs)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%w in\n%s", err, doc)
		}
		if meta.Kind == "" {
			continue // a document holding only comments
		}
		objs[meta.Kind+"/"+meta.Metadata.Name] = doc
	}
}

func (o objects) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	doc, ok := o["Deployment/"+name]
	if !ok {
		t.Fatalf("no Deployment %s rendered (have %s)", name, o.names())
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(doc, &d); err != nil {
		t.Fatalf("Deployment %s: %v", name, err)
	}
	return &d
}

func (o objects) names() string {
	var names []string
	for k := range o {
		names = append(names, k)
	}
	return strings.Join(names, ", ")
}

func container(t *testing.T, d *appsv1.Deployment, name string) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container %s", d.Name, name)
	return corev1.Container{}
}

// The helm internal/toolcache builds reports the release it was built from (its
// Makefile's -X flags), not the module's placeholder "v3.19".
func TestHelmIsThePinnedRelease(t *testing.T) {
	f := setup(t)
	if got := strings.TrimSpace(f.helmOK(t, "version", "--template", "{{.Version}}")); got != toolcache.Helm.Version {
		t.Errorf("helm version %q, want %q", got, toolcache.Helm.Version)
	}
}
