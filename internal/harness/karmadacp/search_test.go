package karmadacp

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const fakeSearchAPIService = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.search.karmada.io
spec:
  caBundle: {{caBundle}}
  group: search.karmada.io
  groupPriorityMinimum: 2000
  service:
    name: karmada-search
    namespace: karmada-system
  version: v1alpha1
  versionPriority: 10
---
apiVersion: v1
kind: Service
metadata:
  name: karmada-search
  namespace: karmada-system
spec:
  type: ExternalName
  externalName: karmada-search.karmada-system.svc.cluster.local
`

func TestSearchAPIService(t *testing.T) {
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{searchAPIServiceFile: fakeSearchAPIService})
	objs, err := SearchAPIService(tree, testCA, 9443)
	if err != nil {
		t.Fatal(err)
	}
	checkSearchAPIService(t, objs, 9443)
}

// checkSearchAPIService checks what karmada-apiserver needs to reach
// karmada-search on loopback: the APIService at port with the CA, its
// Service an ExternalName of localhost, and the certificate name
// (karmada-search.karmada-system.svc) unchanged.
func checkSearchAPIService(t *testing.T, objs []*unstructured.Unstructured, port int64) {
	t.Helper()
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
		switch o.GetKind() {
		case "APIService":
			if o.GetName() != "v1alpha1.search.karmada.io" {
				t.Errorf("APIService %s, want v1alpha1.search.karmada.io", o.GetName())
			}
			got, _, _ := unstructured.NestedInt64(o.Object, "spec", "service", "port")
			ca, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
			if got != port || ca != base64.StdEncoding.EncodeToString(testCA) {
				t.Errorf("APIService port %d caBundle %q, want %d and the CA", got, ca, port)
			}
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "service", "name"); name+"."+SystemNamespace+".svc" != searchServiceDNS {
				t.Errorf("APIService names Service %s, whose name the serving certificate (%s) does not carry", name, searchServiceDNS)
			}
		case "Service":
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "externalName"); name != "localhost" {
				t.Errorf("Service externalName %q, want localhost", name)
			}
		}
	}
	if !slices.Equal(kinds, []string{"APIService", "Service"}) {
		t.Errorf("objects %v, want the APIService and its Service", kinds)
	}
}

func TestSearchAPIServiceRejects(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"another Service":  {strings.Replace(fakeSearchAPIService, "name: karmada-search\n    namespace", "name: other\n    namespace", 1), "names Service karmada-system/other"},
		"ClusterIP":        {strings.Replace(fakeSearchAPIService, "type: ExternalName", "type: ClusterIP", 1), "not ExternalName"},
		"no Service":       {strings.SplitN(fakeSearchAPIService, "---", 2)[0], "got 1 APIService(s) and 0 Service(s)"},
		"an extra object":  {fakeSearchAPIService + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "unexpected ConfigMap x"},
		"new placeholder":  {strings.Replace(fakeSearchAPIService, "{{caBundle}}", "{{caBundle}}{{port}}", 1), "{{port}}"},
		"missing the file": {"", "no such file"},
	} {
		t.Run(name, func(t *testing.T) {
			tree := t.TempDir()
			if tc.file != "" {
				writeFiles(t, tree, map[string]string{searchAPIServiceFile: tc.file})
			}
			_, err := SearchAPIService(tree, testCA, 9443)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestPinnedTreeSearchAPIService renders the applied tree's own file, as
// TestPinnedTreeRenders does the others.
func TestPinnedTreeSearchAPIService(t *testing.T) {
	tree := pinnedTree(t)
	objs, err := SearchAPIService(tree, testCA, 9443)
	if err != nil {
		t.Fatal(err)
	}
	checkSearchAPIService(t, objs, 9443)
	// The flags are upstream's Deployment's, less what searchArgs says it
	// leaves out: a flag upstream drops or renames fails here first.
	deploy, err := os.ReadFile(filepath.Join(tree, "artifacts/deploy/karmada-search.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range searchArgs("/k", "http://127.0.0.1:2379", &pki{dir: "/pki"}, 9443, 2) {
		flag, _, _ := strings.Cut(a, "=")
		if flag != "--v" && flag != "--secure-port" && !strings.Contains(string(deploy), flag+"=") {
			t.Errorf("%s is not one of upstream's karmada-search flags", flag)
		}
	}
}

func TestSearchArgs(t *testing.T) {
	args := searchArgs("/k", "http://127.0.0.1:2379", &pki{dir: "/pki"}, 9443, 2)
	checkLoopbackOnly(t, "karmada-search", args)
	for _, want := range []string{
		"--kubeconfig=/k", "--authentication-kubeconfig=/k", "--authorization-kubeconfig=/k",
		"--etcd-servers=http://127.0.0.1:2379", "--bind-address=127.0.0.1", "--secure-port=9443",
		"--tls-cert-file=/pki/karmada-search.crt", "--tls-private-key-file=/pki/karmada-search.key",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("missing %s in %v", want, args)
		}
	}
	for _, a := range args {
		for _, off := range []string{"--disable-search", "--disable-proxy", "--etcd-prefix", "--feature-gates"} {
			if strings.HasPrefix(a, off) {
				t.Errorf("%s: the scenarios need upstream's defaults (cache and proxy on, /registry)", a)
			}
		}
	}
}

func TestRunning(t *testing.T) {
	if got := (Options{}).Running(); !slices.Equal(got, Components) {
		t.Errorf("default Running %v, want Components", got)
	}
	got := Options{Search: true}.Running()
	if !slices.Equal(got, append(slices.Clone(Components), Search)) {
		t.Errorf("Running with Search %v, want Components then karmada-search", got)
	}
	if len(Components) != 4 {
		t.Errorf("Running appended to Components itself: %v", Components)
	}
}
