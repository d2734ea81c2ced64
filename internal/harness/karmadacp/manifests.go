package karmadacp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Where a Karmada tree keeps what hack/deploy-karmada.sh installs into
// karmada-apiserver; the harness reads them from the pinned tree so the
// control plane is the release's, not a copy that drifts.
const (
	crdKustomization  = "charts/karmada/_crds/kustomization.yaml"
	webhookConfigFile = "artifacts/deploy/webhook-configuration.yaml"
	apiServiceFile    = "artifacts/deploy/karmada-aggregated-apiserver-apiservice.yaml"
)

// webhookServiceURL is the address every webhook of webhookConfigFile and
// the CRD conversion patches call once deploy-karmada.sh filled in the
// placeholders. Nothing resolves .svc names here, so webhookURL rewrites
// it to the webhook's 127.0.0.1 port.
var webhookServiceURL = regexp.MustCompile(`https://` + regexp.QuoteMeta(webhookServiceDNS) + `:443(/|")`)

// placeholder is deploy-karmada.sh's template syntax ({{caBundle}}); one
// left after rendering is an input this harness does not know about.
var placeholder = regexp.MustCompile(`\{\{[A-Za-z_]+\}\}`)

// render fills the placeholders deploy-karmada.sh fills (util::fill_cabundle
// and its sed lines), points the webhook URLs at 127.0.0.1:webhookPort and
// fails on any placeholder left over.
func render(what string, data, caPEM []byte, webhookPort int) ([]byte, error) {
	data = bytes.ReplaceAll(data, []byte("{{caBundle}}"), []byte(base64.StdEncoding.EncodeToString(caPEM)))
	data = bytes.ReplaceAll(data, []byte("{{name}}"), []byte(webhookServiceName))
	data = bytes.ReplaceAll(data, []byte("{{namespace}}"), []byte(SystemNamespace))
	if webhookPort > 0 {
		data = webhookServiceURL.ReplaceAll(data, []byte(webhookURL(webhookPort)+"$1"))
	}
	if left := placeholder.Find(data); left != nil {
		return nil, fmt.Errorf("%s: placeholder %s is not one the harness fills", what, left)
	}
	return data, nil
}

func webhookURL(port int) string { return "https://" + loopback + ":" + strconv.Itoa(port) }

// kustomization is the part of charts/karmada/_crds/kustomization.yaml
// the harness reads.
type kustomization struct {
	Resources []string `json:"resources"`
	Patches   []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

// CRDs returns Karmada's CRDs as the chart installs them: every resource of
// the tree's _crds/kustomization.yaml with its patches applied (the two
// that make resourcebindings and clusterresourcebindings convert through
// karmada-webhook), rendered as deploy-karmada.sh renders them, with the
// conversion webhook at 127.0.0.1:webhookPort. The order is the
// kustomization's.
func CRDs(tree string, caPEM []byte, webhookPort int) ([]byte, error) {
	kpath := filepath.Join(tree, crdKustomization)
	raw, err := os.ReadFile(kpath)
	if err != nil {
		return nil, fmt.Errorf("karmada CRDs: %w", err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		// Strict: a kustomization feature the harness ignores (a second
		// kind of patch, a generator) must not be dropped silently.
		return nil, fmt.Errorf("karmada CRDs: %s: %w", kpath, err)
	}
	if len(k.Resources) == 0 {
		return nil, fmt.Errorf("karmada CRDs: %s lists no resources", kpath)
	}
	base := filepath.Dir(kpath)
	patches := map[string][]byte{} // by CRD name
	for _, p := range k.Patches {
		data, err := os.ReadFile(filepath.Join(base, p.Path))
		if err != nil {
			return nil, fmt.Errorf("karmada CRDs: patch: %w", err)
		}
		if data, err = render(p.Path, data, caPEM, webhookPort); err != nil {
			return nil, fmt.Errorf("karmada CRDs: %w", err)
		}
		name, err := objectName(data)
		if err != nil {
			return nil, fmt.Errorf("karmada CRDs: patch %s: %w", p.Path, err)
		}
		if patches[name], err = yaml.YAMLToJSON(data); err != nil {
			return nil, fmt.Errorf("karmada CRDs: patch %s: %w", p.Path, err)
		}
	}
	var out bytes.Buffer
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(base, r))
		if err != nil {
			return nil, fmt.Errorf("karmada CRDs: %w", err)
		}
		doc, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("karmada CRDs: %s: %w", r, err)
		}
		name, err := objectName(data)
		if err != nil {
			return nil, fmt.Errorf("karmada CRDs: %s: %w", r, err)
		}
		if patch, ok := patches[name]; ok {
			// A kustomize patch of a CRD (no strategic-merge schema) is a
			// JSON merge patch.
			if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
				return nil, fmt.Errorf("karmada CRDs: patching %s: %w", name, err)
			}
			delete(patches, name)
		}
		out.WriteString("---\n")
		out.Write(doc)
		out.WriteString("\n")
	}
	if len(patches) > 0 {
		return nil, fmt.Errorf("karmada CRDs: patches name CRDs the kustomization does not list: %v", slices.Sorted(maps.Keys(patches)))
	}
	return out.Bytes(), nil
}

func objectName(data []byte) (string, error) {
	var o unstructured.Unstructured
	if err := yaml.Unmarshal(data, &o.Object); err != nil {
		return "", err
	}
	if o.GetName() == "" {
		return "", fmt.Errorf("no metadata.name")
	}
	return o.GetName(), nil
}

// WebhookConfiguration returns the tree's Mutating- and
// ValidatingWebhookConfiguration rendered as deploy-karmada.sh renders
// them, each webhook called at 127.0.0.1:webhookPort.
func WebhookConfiguration(tree string, caPEM []byte, webhookPort int) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(tree, webhookConfigFile))
	if err != nil {
		return nil, fmt.Errorf("karmada webhook configuration: %w", err)
	}
	if !webhookServiceURL.Match(data) {
		return nil, fmt.Errorf("karmada webhook configuration %s: no webhook at https://%s:443; the harness would not know where to point them", webhookConfigFile, webhookServiceDNS)
	}
	if data, err = render(webhookConfigFile, data, caPEM, webhookPort); err != nil {
		return nil, fmt.Errorf("karmada webhook configuration: %w", err)
	}
	return data, nil
}

// AggregatedAPIService returns the tree's APIService for
// cluster.karmada.io/v1alpha1 and the Service it names, rendered by
// apiService for the aggregated API server at 127.0.0.1:port.
func AggregatedAPIService(tree string, caPEM []byte, port int) ([]*unstructured.Unstructured, error) {
	return apiService(tree, apiServiceFile, aggregatedServiceName, caPEM, port)
}

func decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}
