package karmadacp

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

var testCA = []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const fakeCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s
spec:
  group: work.karmada.io
`

const fakeConversionPatch = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: resourcebindings.work.karmada.io
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        url: "https://{{name}}.{{namespace}}.svc:443/convert"
        caBundle: "{{caBundle}}"
      conversionReviewVersions: ["v1"]
`

// fakeCRDTree is a tree with the chart's CRD layout: two CRDs, one patched.
func fakeCRDTree(t *testing.T, kustomization string) string {
	t.Helper()
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"charts/karmada/_crds/kustomization.yaml":                       kustomization,
		"charts/karmada/_crds/bases/work/resourcebindings.yaml":         strings.Replace(fakeCRD, "%s", "resourcebindings.work.karmada.io", 1),
		"charts/karmada/_crds/bases/work/works.yaml":                    strings.Replace(fakeCRD, "%s", "works.work.karmada.io", 1),
		"charts/karmada/_crds/patches/webhook_in_resourcebindings.yaml": fakeConversionPatch,
	})
	return tree
}

const fakeKustomization = `resources:
- bases/work/works.yaml
- bases/work/resourcebindings.yaml
patches:
- path: patches/webhook_in_resourcebindings.yaml
`

func TestCRDsPatchAndRender(t *testing.T) {
	tree := fakeCRDTree(t, fakeKustomization)
	out, err := CRDs(tree, testCA, 9443)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "works.work.karmada.io" || objs[1].GetName() != "resourcebindings.work.karmada.io" {
		t.Fatalf("want both CRDs in the kustomization's order, got %d objects", len(objs))
	}
	if _, found, _ := unstructured.NestedMap(objs[0].Object, "spec", "conversion"); found {
		t.Error("an unpatched CRD got a conversion webhook")
	}
	url, _, _ := unstructured.NestedString(objs[1].Object, "spec", "conversion", "webhook", "clientConfig", "url")
	if url != "https://127.0.0.1:9443/convert" {
		t.Errorf("conversion webhook URL %q, want https://127.0.0.1:9443/convert", url)
	}
	ca, _, _ := unstructured.NestedString(objs[1].Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	if ca != base64.StdEncoding.EncodeToString(testCA) {
		t.Errorf("caBundle %q is not the CA", ca)
	}
	if group, _, _ := unstructured.NestedString(objs[1].Object, "spec", "group"); group != "work.karmada.io" {
		t.Errorf("the patch lost the base's fields: group %q", group)
	}
}

func TestCRDsRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		kustomization string
		extra         map[string]string
		want          string
	}{
		"unknown kustomization field": {fakeKustomization + "namePrefix: x-\n", nil, "namePrefix"},
		"no resources":                {"resources: []\n", nil, "lists no resources"},
		"patch of an unlisted CRD":    {"resources:\n- bases/work/works.yaml\npatches:\n- path: patches/webhook_in_resourcebindings.yaml\n", nil, "resourcebindings.work.karmada.io"},
		"unknown placeholder": {fakeKustomization, map[string]string{
			"charts/karmada/_crds/patches/webhook_in_resourcebindings.yaml": strings.Replace(fakeConversionPatch, "{{caBundle}}", "{{caBundle}}{{port}}", 1),
		}, "{{port}}"},
		"missing resource": {"resources:\n- bases/work/none.yaml\n", nil, "none.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			tree := fakeCRDTree(t, tc.kustomization)
			writeFiles(t, tree, tc.extra)
			_, err := CRDs(tree, testCA, 9443)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestWebhookConfiguration(t *testing.T) {
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{webhookConfigFile: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-config
webhooks:
  - name: a.karmada.io
    clientConfig:
      url: https://karmada-webhook.karmada-system.svc:443/validate-a
      caBundle: {{caBundle}}
  - name: b.karmada.io
    clientConfig:
      url: "https://karmada-webhook.karmada-system.svc:443/validate-b"
      caBundle: {{caBundle}}
`})
	out, err := WebhookConfiguration(tree, testCA, 8443)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"url: https://127.0.0.1:8443/validate-a", `url: "https://127.0.0.1:8443/validate-b"`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	if strings.Contains(s, ".svc") || strings.Contains(s, "{{") {
		t.Errorf("left a Service URL or placeholder:\n%s", s)
	}

	writeFiles(t, tree, map[string]string{webhookConfigFile: "webhooks:\n- clientConfig:\n    url: https://elsewhere:443/x\n"})
	if _, err := WebhookConfiguration(tree, testCA, 8443); err == nil || !strings.Contains(err.Error(), "no webhook at") {
		t.Errorf("a configuration calling no karmada-webhook: got %v", err)
	}
}

func TestAggregatedAPIService(t *testing.T) {
	tree := t.TempDir()
	upstream := `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.cluster.karmada.io
spec:
  caBundle: {{caBundle}}
  group: cluster.karmada.io
  groupPriorityMinimum: 2000
  service:
    name: karmada-aggregated-apiserver
    namespace: karmada-system
  version: v1alpha1
  versionPriority: 10
---
apiVersion: v1
kind: Service
metadata:
  name: karmada-aggregated-apiserver
  namespace: karmada-system
spec:
  type: ExternalName
  externalName: karmada-aggregated-apiserver.karmada-system.svc.cluster.local
`
	writeFiles(t, tree, map[string]string{apiServiceFile: upstream})
	objs, err := AggregatedAPIService(tree, testCA, 7443)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "APIService":
			port, _, _ := unstructured.NestedInt64(o.Object, "spec", "service", "port")
			ca, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
			if port != 7443 || ca != base64.StdEncoding.EncodeToString(testCA) {
				t.Errorf("APIService port %d caBundle %q", port, ca)
			}
		case "Service":
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "externalName"); name != "localhost" {
				t.Errorf("Service externalName %q, want localhost", name)
			}
		}
	}

	writeFiles(t, tree, map[string]string{apiServiceFile: strings.Replace(upstream, "type: ExternalName", "type: ClusterIP", 1)})
	if _, err := AggregatedAPIService(tree, testCA, 7443); err == nil || !strings.Contains(err.Error(), "not ExternalName") {
		t.Errorf("a ClusterIP Service: got %v", err)
	}
}

// pinnedTree is the applied tree of pins.txt's default Karmada pin; t is
// skipped when `holdfast apply` has not made it.
func pinnedTree(t *testing.T) string {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := build.LocateDefault(root, upstreamName, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.Tree, crdKustomization)); err != nil {
		t.Skipf("no applied tree at %s (holdfast apply --upstream karmada): %v", b.Tree, err)
	}
	return b.Tree
}

// TestPinnedTreeRenders renders the pinned tree's own files, when `holdfast
// apply` made it: a rebase onto a release that changes them (a new
// placeholder, another webhook address, a new kustomization feature) fails
// here first.
func TestPinnedTreeRenders(t *testing.T) {
	tree := pinnedTree(t)
	crds, err := CRDs(tree, testCA, 9443)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(crds), "https://127.0.0.1:9443/convert"); n != 2 {
		t.Errorf("%d CRDs convert through the webhook, want 2 (resourcebindings, clusterresourcebindings)", n)
	}
	hooks, err := WebhookConfiguration(tree, testCA, 8443)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hooks), ".svc") {
		t.Error("a webhook still calls a Service name")
	}
	if _, err := AggregatedAPIService(tree, testCA, 7443); err != nil {
		t.Fatal(err)
	}
}

func TestPushCluster(t *testing.T) {
	c := PushCluster("member1", "https://127.0.0.1:6443", "uid-1")
	for path, want := range map[string]string{
		"spec.syncMode": "Push", "spec.apiEndpoint": "https://127.0.0.1:6443", "spec.id": "uid-1",
		"spec.secretRef.name": "member1", "spec.secretRef.namespace": ClusterNamespace,
		"spec.impersonatorSecretRef.name": "member1-impersonator",
	} {
		got, _, _ := unstructured.NestedString(c.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}
