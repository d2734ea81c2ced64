package karmada

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

const (
	controllerGenPackage = "sigs.k8s.io/controller-tools/cmd/controller-gen"
	// clusterTypesPackage holds cluster.karmada.io/v1alpha1, relative to the
	// Karmada module root.
	clusterTypesPackage = "./pkg/apis/cluster/v1alpha1"
	// clusterCRDFile is the name controller-gen gives the Cluster CRD
	// (<group>_<plural>.yaml).
	clusterCRDFile = "cluster.karmada.io_clusters.yaml"
	// crdCacheDir sits beside internal/toolcache's cache: ignored by git and by
	// `go ... ./...`.
	crdCacheDir = ".cache/crds"
)

// controllerGenVersionLine is how Karmada's hack/update-crdgen.sh pins the
// controller-gen it generates its CRDs with.
var controllerGenVersionLine = regexp.MustCompile(`(?m)^CONTROLLER_GEN_VER="(v[^"]+)"`)

// ControllerGenVersion returns the controller-gen version the Karmada tree
// generates its own CRDs with, so the stand-in Cluster CRD comes out as
// upstream's tooling would make it and a rebase onto a newer Karmada follows
// its tooling without an edit here.
func ControllerGenVersion(tree string) (string, error) {
	script := filepath.Join(tree, "hack", "update-crdgen.sh")
	data, err := os.ReadFile(script)
	if err != nil {
		return "", fmt.Errorf("reading the controller-gen version of karmada tree %s: %w", tree, err)
	}
	m := controllerGenVersionLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s has no CONTROLLER_GEN_VER=\"v...\" line", script)
	}
	return string(m[1]), nil
}

// ControllerGen is controller-gen at version as an e2e tool, built through a
// wrapper module like etcd and kube-apiserver and cached under .cache/tools.
func ControllerGen(version string) toolcache.Tool {
	return toolcache.Tool{
		Name:    "controller-gen",
		Version: version,
		GoMod: fmt.Sprintf(`module holdfast.local/controller-gen-build

go 1.25.0

require sigs.k8s.io/controller-tools %s
`, version),
		Package: controllerGenPackage,
	}
}

// ClusterCRD returns the path of a cluster.karmada.io/v1alpha1 Cluster CRD
// generated from the target tree's Go types: the stand-in for the API that
// karmada-aggregated-apiserver serves upstream. It is generated once per
// Karmada version and cached under <root>/.cache/crds/karmada-<version>/.
func ClusterCRD(ctx context.Context, root string, target Target) (string, error) {
	dir := filepath.Join(root, crdCacheDir, upstreamName+"-"+target.Version)
	path := filepath.Join(dir, clusterCRDFile)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := target.CheckTree(); err != nil {
		return "", err
	}
	version, err := ControllerGenVersion(target.Tree)
	if err != nil {
		return "", err
	}
	controllerGen, err := toolcache.Ensure(ctx, root, ControllerGen(version))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, err := os.MkdirTemp(dir, ".generate-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(out)

	cmd := exec.CommandContext(ctx, controllerGen, "crd", "paths="+clusterTypesPackage, "output:crd:dir="+out)
	cmd.Dir = target.Tree
	// The tree's go.mod and go.sum are verified inputs: never let the
	// package loader rewrite them, and keep any go.work above out of it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("controller-gen %s on %s in %s: %w: %s", version, clusterTypesPackage, target.Tree, err, msg)
	}
	generated, err := os.ReadFile(filepath.Join(out, clusterCRDFile))
	if err != nil {
		return "", fmt.Errorf("controller-gen %s did not write %s: %w", version, clusterCRDFile, err)
	}
	crd, err := NormalizeClusterCRD(generated)
	if err != nil {
		return "", fmt.Errorf("Cluster CRD generated from %s: %w", target.Tree, err)
	}
	// Rename last, so that an interrupted generation is never taken for a
	// cached one.
	tmp := filepath.Join(out, "normalized.yaml")
	if err := os.WriteFile(tmp, crd, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

// NormalizeClusterCRD makes sure the generated CRD serves Cluster the way
// the aggregated API does: cluster-scoped, with a status subresource (the
// cluster-status controller writes status through it, and a spec update
// must not wipe status). Karmada v1.18's types carry the markers that make
// controller-gen emit both (+kubebuilder:resource:scope="Cluster",
// +kubebuilder:subresource:status); this step sets them when a tree's types
// do not, and is a no-op otherwise.
func NormalizeClusterCRD(data []byte) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("not a YAML object: %w", err)
	}
	crd := unstructured.Unstructured{Object: obj}
	if crd.GetKind() != "CustomResourceDefinition" {
		return nil, fmt.Errorf("kind is %q, want CustomResourceDefinition", crd.GetKind())
	}
	group, _, _ := unstructured.NestedString(obj, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj, "spec", "names", "kind")
	if group != "cluster.karmada.io" || kind != "Cluster" {
		return nil, fmt.Errorf("defines %s %s, want cluster.karmada.io Cluster", group, kind)
	}
	versions, found, err := unstructured.NestedSlice(obj, "spec", "versions")
	if err != nil || !found || len(versions) == 0 {
		return nil, errors.New("has no spec.versions")
	}
	for i, v := range versions {
		version, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.versions[%d] is not an object", i)
		}
		if _, found, _ := unstructured.NestedMap(version, "subresources", "status"); !found {
			if err := unstructured.SetNestedMap(version, map[string]any{}, "subresources", "status"); err != nil {
				return nil, fmt.Errorf("spec.versions[%d]: %w", i, err)
			}
		}
	}
	if err := unstructured.SetNestedSlice(obj, versions, "spec", "versions"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(obj, "Cluster", "spec", "scope"); err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Stand-in for karmada-aggregated-apiserver's cluster.karmada.io API, generated by holdfast's e2e suite.\n"), append(bytes.TrimSpace(out), '\n')...), nil
}
