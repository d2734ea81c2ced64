package hubcrds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The hub's CRDs come from the KubeSlice API module the worker's hub side is
// written against. DESIGN.md pins v0.5.0, the newest served; neither v0.4.0
// (which worker-operator v1.6.4's go.mod requires) nor v0.5.0 has
// status.activeController, so the Cluster CRD is extended below.
const (
	APIsModule  = "github.com/kubeslice/apis"
	APIsVersion = "v0.5.0"
	// WorkerOperatorModule holds the worker cluster's CRDs (config/crd/bases).
	WorkerOperatorModule = "github.com/kubeslice/worker-operator"
)

// ClusterCRDName is the hub's Cluster CRD, the one whose status the test
// writes activeController into.
const ClusterCRDName = "clusters.controller.kubeslice.io"

// ModuleDir returns the module cache folder holding module@version. `go mod
// download` fetches it through the Go module proxy if needed and verifies it
// against the checksum database, as the rest of holdfast's pipeline does.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct {
		Dir   string
		Error string
	}
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", module, version, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s reported no folder", module, version)
	}
	return info.Dir, nil
}

// ReadCRDs concatenates every *.yaml in dir, in name order, as one
// multi-document YAML. The Cluster CRD, if among them, gets the
// activeController status schema.
func ReadCRDs(dir string) ([]byte, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no CRD files (*.yaml) in %s", dir)
	}
	sort.Strings(paths)
	var all bytes.Buffer
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs, err := splitYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		for _, doc := range docs {
			if name, _, _ := unstructured.NestedString(doc, "metadata", "name"); name == ClusterCRDName {
				if err := addActiveControllerStatus(doc); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
			b, err := json.Marshal(doc) // JSON is YAML, and keeps the edit exact
			if err != nil {
				return nil, err
			}
			all.WriteString("---\n")
			all.Write(b)
			all.WriteString("\n")
		}
	}
	return all.Bytes(), nil
}

// splitYAML decodes every non-empty document of a multi-document YAML.
func splitYAML(raw []byte) ([]map[string]interface{}, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var docs []map[string]interface{}
	for {
		var doc map[string]interface{}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
}

// activeControllerSchema is status.activeController as kubeslice/apis PR #46
// defines it and DESIGN.md ("Contracts with the outside world") describes it.
// Without it in the schema the API server prunes the field on write, and
// every read by the worker would find nothing published.
func activeControllerSchema() map[string]interface{} {
	str := func(description string) map[string]interface{} {
		return map[string]interface{}{"type": "string", "description": description}
	}
	caBundle := str("PEM CA bundle of the Active hub's API server, base64 in JSON.")
	caBundle["format"] = "byte"
	lastUpdated := str("When the Active hub last published this declaration (RFC 3339).")
	lastUpdated["format"] = "date-time"
	return map[string]interface{}{
		"type":        "object",
		"description": "The hub controller holding leadership, as published by the hub controllers (added in memory by holdfast's e2e: kubeslice/apis " + APIsVersion + " lacks it).",
		"properties": map[string]interface{}{
			"endpoint":       str("API server URL of the Active hub."),
			"caBundle":       caBundle,
			"activeIdentity": str("Identity of the Active hub controller."),
			"lastUpdated":    lastUpdated,
		},
	}
}

// addActiveControllerStatus adds activeController to the status schema of
// every version of a Cluster CRD, leaving a schema that already has it (a
// future kubeslice/apis) alone.
func addActiveControllerStatus(crd map[string]interface{}) error {
	raw, _, _ := unstructured.NestedFieldNoCopy(crd, "spec", "versions")
	versions, _ := raw.([]interface{})
	if len(versions) == 0 {
		return errors.New("the Cluster CRD has no spec.versions")
	}
	for _, v := range versions {
		version, _ := v.(map[string]interface{})
		name, _, _ := unstructured.NestedString(version, "name")
		raw, _, _ := unstructured.NestedFieldNoCopy(version, "schema", "openAPIV3Schema", "properties", "status")
		status, ok := raw.(map[string]interface{})
		if !ok {
			return fmt.Errorf("the Cluster CRD's version %q has no status schema to extend", name)
		}
		props, _ := status["properties"].(map[string]interface{})
		if props == nil {
			props = map[string]interface{}{}
			status["properties"] = props
		}
		if _, exists := props["activeController"]; !exists {
			props["activeController"] = activeControllerSchema()
		}
	}
	return nil
}
