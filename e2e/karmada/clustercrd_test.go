package karmada

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// generatedCRD is the shape of controller-gen's output for Karmada v1.18's
// Cluster types, trimmed to what NormalizeClusterCRD looks at.
const generatedCRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.20.0
  name: clusters.cluster.karmada.io
spec:
  group: cluster.karmada.io
  names:
    kind: Cluster
    plural: clusters
  scope: Cluster
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        type: object
    served: true
    storage: true
    subresources:
      status: {}
`

func TestNormalizeClusterCRD(t *testing.T) {
	withoutMarkers := strings.Replace(generatedCRD, "scope: Cluster", "scope: Namespaced", 1)
	withoutMarkers = strings.Replace(withoutMarkers, "    subresources:\n      status: {}\n", "", 1)
	tests := []struct {
		name, in, wantErr string
	}{
		{name: "types with markers", in: generatedCRD},
		{name: "types without markers get scope and status", in: withoutMarkers},
		{name: "another kind", in: strings.Replace(generatedCRD, "kind: Cluster", "kind: Work", 1), wantErr: "want cluster.karmada.io Cluster"},
		{name: "not a CRD", in: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "want CustomResourceDefinition"},
		{name: "no versions", in: strings.Split(generatedCRD, "  versions:")[0], wantErr: "no spec.versions"},
		{name: "not YAML", in: "{", wantErr: "not a YAML object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := NormalizeClusterCRD([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NormalizeClusterCRD() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var crd struct {
				Spec struct {
					Scope    string
					Versions []struct {
						Name         string
						Subresources map[string]map[string]any
					}
				}
			}
			if err := yaml.Unmarshal(out, &crd); err != nil {
				t.Fatalf("output is not YAML: %v\n%s", err, out)
			}
			if crd.Spec.Scope != "Cluster" {
				t.Errorf("scope = %q, want Cluster", crd.Spec.Scope)
			}
			if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Subresources["status"] == nil {
				t.Errorf("versions = %+v, want v1alpha1 with a status subresource", crd.Spec.Versions)
			}
			if !strings.HasPrefix(string(out), "# Stand-in for karmada-aggregated-apiserver") {
				t.Errorf("output does not say it is a stand-in:\n%s", out)
			}
		})
	}
}

func TestControllerGenVersion(t *testing.T) {
	tests := []struct {
		name, script, want, wantErr string
	}{
		{name: "karmada v1.18 script", script: "CONTROLLER_GEN_PKG=\"sigs.k8s.io/controller-tools/cmd/controller-gen\"\nCONTROLLER_GEN_VER=\"v0.20.0\"\n", want: "v0.20.0"},
		{name: "no pin", script: "controller-gen crd paths=./...\n", wantErr: "no CONTROLLER_GEN_VER"},
		{name: "no script", wantErr: "reading the controller-gen version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := t.TempDir()
			if tt.script != "" {
				if err := os.MkdirAll(filepath.Join(tree, "hack"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(tree, "hack", "update-crdgen.sh"), []byte(tt.script), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ControllerGenVersion(tree)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ControllerGenVersion() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ControllerGenVersion() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestControllerGenTool(t *testing.T) {
	tool := ControllerGen("v0.20.0")
	if tool.Name != "controller-gen" || tool.Version != "v0.20.0" || tool.Package != controllerGenPackage {
		t.Errorf("ControllerGen() = %+v", tool)
	}
	if !strings.Contains(tool.GoMod, "require sigs.k8s.io/controller-tools v0.20.0") {
		t.Errorf("GoMod does not require controller-tools v0.20.0:\n%s", tool.GoMod)
	}
}

func TestKarmadaCRDFiles(t *testing.T) {
	tree := t.TempDir()
	if _, err := KarmadaCRDFiles(tree); err == nil {
		t.Fatal("KarmadaCRDFiles() on a tree without CRDs succeeded")
	}
	for _, f := range []string{"work/work.karmada.io_works.yaml", "apps/apps.karmada.io_workloadrebalancers.yaml", "README.md"} {
		path := filepath.Join(tree, crdBasesDir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := KarmadaCRDFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(tree, crdBasesDir, "apps/apps.karmada.io_workloadrebalancers.yaml"),
		filepath.Join(tree, crdBasesDir, "work/work.karmada.io_works.yaml"),
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("KarmadaCRDFiles() = %v, want %v (YAML only, sorted)", got, want)
	}
}
