package karmadacp

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestMetricsAdapterAPIServicesFromTheTree renders the pinned tree's
// APIServices for karmada-metrics-adapter: every group the adapter serves
// is registered, each at the adapter's port with the CA, and the Service
// they name reaches loopback.
func TestMetricsAdapterAPIServicesFromTheTree(t *testing.T) {
	tree := pinnedTree(t)
	objs, err := MetricsAdapterAPIServices(tree, testCA, 7444)
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, o := range objs {
		switch o.GetKind() {
		case "APIService":
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			version, _, _ := unstructured.NestedString(o.Object, "spec", "version")
			groups = append(groups, version+"."+group)
			port, _, _ := unstructured.NestedInt64(o.Object, "spec", "service", "port")
			ca, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
			if port != 7444 || ca != base64.StdEncoding.EncodeToString(testCA) {
				t.Errorf("APIService %s: port %d, caBundle %q", o.GetName(), port, ca)
			}
		case "Service":
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "externalName"); name != loopbackName {
				t.Errorf("Service %s: externalName %q, want %s", o.GetName(), name, loopbackName)
			}
		}
	}
	slices.Sort(groups)
	want := []string{"v1beta1.custom.metrics.k8s.io", "v1beta1.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io"}
	if !slices.Equal(groups, want) {
		t.Errorf("APIServices %v, want %v", groups, want)
	}
}

func TestMetricsAdapterAPIServicesRejects(t *testing.T) {
	const good = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  caBundle: {{caBundle}}
  group: metrics.k8s.io
  version: v1beta1
  service:
    name: karmada-metrics-adapter
    namespace: karmada-system
---
apiVersion: v1
kind: Service
metadata:
  name: karmada-metrics-adapter
  namespace: karmada-system
spec:
  type: ExternalName
  externalName: karmada-metrics-adapter.karmada-system.svc.cluster.local
`
	for _, tc := range []struct{ name, file, want string }{
		{"another Service named", strings.Replace(good, "    name: karmada-metrics-adapter\n", "    name: other\n", 1), "names Service karmada-system/other"},
		{"a ClusterIP Service", strings.Replace(good, "type: ExternalName", "type: ClusterIP", 1), "not ExternalName"},
		{"no Service", good[:strings.Index(good, "---")], "0 Service(s)"},
		{"an unknown placeholder", strings.Replace(good, "v1beta1.metrics", "{{version}}.metrics", 1), "placeholder {{version}}"},
		{"another kind", good + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "unexpected ConfigMap"},
	} {
		tree := t.TempDir()
		writeFiles(t, tree, map[string]string{metricsAdapterAPIServiceFile: tc.file})
		_, err := MetricsAdapterAPIServices(tree, testCA, 7444)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := MetricsAdapterAPIServices(t.TempDir(), testCA, 7444); err == nil || !strings.Contains(err.Error(), metricsAdapterAPIServiceFile) {
		t.Errorf("a tree without the file: got %v", err)
	}
}

// TestMetricsAdapterArgsFollowUpstream checks the flags against upstream's
// Deployment in the pinned tree: every flag it sets is set here, but for
// the one left out on purpose, so a release that adds a flag fails here.
func TestMetricsAdapterArgsFollowUpstream(t *testing.T) {
	tree := pinnedTree(t)
	data, err := os.ReadFile(filepath.Join(tree, "artifacts/deploy/karmada-metrics-adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var upstream []string
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		raw, _ := yaml.Marshal(o.Object)
		var d appsv1.Deployment
		if err := yaml.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		for _, a := range d.Spec.Template.Spec.Containers[0].Command[1:] {
			upstream = append(upstream, flagName(a))
		}
	}
	if len(upstream) == 0 {
		t.Fatal("no karmada-metrics-adapter Deployment command in the tree")
	}
	args := metricsAdapterArgs("/k", "/c", "/k2", 7444, 7445, 2)
	var ours []string
	for _, a := range args {
		ours = append(ours, flagName(a))
	}
	leftOut := []string{"--client-ca-file"}
	for _, f := range upstream {
		if !slices.Contains(ours, f) && !slices.Contains(leftOut, f) {
			t.Errorf("upstream sets %s, the harness does not", f)
		}
	}
	for _, want := range []string{"--secure-port=7444", "--bind-address=127.0.0.1", "--metrics-bind-address=127.0.0.1:7445", "--tls-cert-file=/c", "--tls-private-key-file=/k2"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
}

func flagName(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	return name
}
