package hubcrds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const miniClusterCRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.controller.kubeslice.io
spec:
  group: controller.kubeslice.io
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        properties:
          status:
            properties:
              nodeIPs:
                type: array
                items: {type: string}
            type: object
        type: object
    served: true
    storage: true
    subresources:
      status: {}
`

const miniOtherCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: projects.controller.kubeslice.io
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        type: object
`

func TestReadCRDsExtendsOnlyTheClusterStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("controller.kubeslice.io_clusters.yaml", miniClusterCRD)
	write("controller.kubeslice.io_projects.yaml", miniOtherCRD)
	write("README.md", "not a CRD")

	all, err := ReadCRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := splitYAML(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 {
		t.Fatalf("read %d documents, want the two CRDs", len(docs))
	}
	for _, doc := range docs {
		name, _, _ := unstructured.NestedString(doc, "metadata", "name")
		versions, _, _ := unstructured.NestedSlice(doc, "spec", "versions")
		status, found, _ := unstructured.NestedMap(versions[0].(map[string]interface{}),
			"schema", "openAPIV3Schema", "properties", "status", "properties")
		_, has := status["activeController"]
		switch name {
		case ClusterCRDName:
			if !found || !has {
				t.Fatalf("the Cluster CRD's status lacks activeController: %v", status)
			}
			if _, kept := status["nodeIPs"]; !kept {
				t.Errorf("the existing status schema was replaced: %v", status)
			}
			ac := status["activeController"].(map[string]interface{})["properties"].(map[string]interface{})
			for _, field := range []string{"endpoint", "caBundle", "activeIdentity", "lastUpdated"} {
				if _, ok := ac[field]; !ok {
					t.Errorf("activeController lacks %s", field)
				}
			}
		default:
			if has {
				t.Errorf("%s was extended too", name)
			}
		}
	}
}

func TestAddActiveControllerStatusErrors(t *testing.T) {
	tests := []struct {
		name string
		crd  string
		want string
	}{
		{"no versions", "metadata: {name: clusters.controller.kubeslice.io}\n", "no spec.versions"},
		{"no status", "spec:\n  versions:\n  - name: v1alpha1\n    schema: {openAPIV3Schema: {type: object}}\n", `version "v1alpha1" has no status schema`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := splitYAML([]byte(tc.crd))
			if err != nil {
				t.Fatal(err)
			}
			err = addActiveControllerStatus(docs[0])
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestReadCRDsEmptyFolder(t *testing.T) {
	if _, err := ReadCRDs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no CRD files") {
		t.Errorf("error = %v, want one naming the empty folder", err)
	}
}
