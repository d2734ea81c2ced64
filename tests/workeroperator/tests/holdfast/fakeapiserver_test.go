/*
Copyright 2026 The holdfast Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package holdfast

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	hubv1alpha1 "github.com/kubeslice/apis/pkg/controller/v1alpha1"
	workerv1alpha1 "github.com/kubeslice/apis/pkg/worker/v1alpha1"
	kubeslicev1beta1 "github.com/kubeslice/worker-operator/api/v1beta1"
	nsmv1 "github.com/networkservicemesh/sdk-k8s/pkg/tools/k8s/apis/networkservicemesh.io/v1"
	istiov1beta1 "istio.io/client-go/pkg/apis/networking/v1beta1"
)

// apiScheme holds every kind the worker manager (main.go's scheme) and the
// hub manager (pkg/hub/manager's scheme) watch, so one fake serves either.
var apiScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(nsmv1.AddToScheme(s))
	utilruntime.Must(istiov1beta1.AddToScheme(s))
	utilruntime.Must(kubeslicev1beta1.AddToScheme(s))
	utilruntime.Must(workerv1alpha1.AddToScheme(s))
	utilruntime.Must(hubv1alpha1.AddToScheme(s))
	return s
}()

// clusterScoped are the kinds of apiScheme served without a namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "StorageClass": true, "PriorityClass": true, "CSIDriver": true,
	"CSINode": true, "VolumeAttachment": true, "RuntimeClass": true, "IngressClass": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"CertificateSigningRequest": true, "ComponentStatus": true,
}

// fakeAPIServer is an API server good enough for a controller-runtime manager
// to start and idle against: discovery for every kind of apiScheme, empty
// lists, watches held open, and, on a hub, the worker's Cluster CR. It
// answers 401 to any token but its own, so a client that authenticates to one
// hub with another's credential is caught.
type fakeAPIServer struct {
	srv       *httptest.Server
	token     string
	tokenFile string
	caFile    string
	discovery map[string][]byte                  // discovery documents by path
	kinds     map[string]schema.GroupVersionKind // "group/version/resource" -> kind
	closing   chan struct{}

	mu           sync.Mutex
	revoked      chan struct{}  // closed by revoke: its token is refused from then on
	cluster      []byte         // GET of the worker's Cluster CR; nil: NotFound
	probes       int            // GETs of the worker's Cluster CR
	lists        map[string]int // LIST requests by resource
	unauthorized int
}

func newFakeAPIServer(t *testing.T, name string) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{
		token:     "token-of-" + name,
		discovery: map[string][]byte{},
		kinds:     map[string]schema.GroupVersionKind{},
		closing:   make(chan struct{}),
		revoked:   make(chan struct{}),
		lists:     map[string]int{},
	}
	f.buildDiscovery()
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.closing) // releases held watches, which Close waits for
		f.srv.Close()
	})
	dir := t.TempDir()
	f.tokenFile = writeFile(t, dir, "token", f.token)
	f.caFile = writeFile(t, dir, "ca.crt", string(f.caPEM()))
	return f
}

func (f *fakeAPIServer) URL() string { return f.srv.URL }

func (f *fakeAPIServer) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
}

// kubeconfig writes a kubeconfig for this server with its token.
func (f *fakeAPIServer) kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := map[string]interface{}{
		"apiVersion": "v1", "kind": "Config", "current-context": "fake",
		"clusters": []interface{}{map[string]interface{}{"name": "fake", "cluster": map[string]interface{}{
			"server": f.URL(), "certificate-authority": f.caFile}}},
		"users": []interface{}{map[string]interface{}{"name": "fake", "user": map[string]interface{}{
			"tokenFile": f.tokenFile}}},
		"contexts": []interface{}{map[string]interface{}{"name": "fake", "context": map[string]interface{}{
			"cluster": "fake", "user": "fake"}}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, t.TempDir(), "kubeconfig", string(b))
}

func (f *fakeAPIServer) buildDiscovery() {
	objectType := reflect.TypeOf((*metav1.Object)(nil)).Elem()
	resources := map[schema.GroupVersion][]metav1.APIResource{}
	for gvk, typ := range apiScheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") ||
			!reflect.PointerTo(typ).Implements(objectType) {
			continue
		}
		if !apiScheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
			continue
		}
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		gv := gvk.GroupVersion()
		resources[gv] = append(resources[gv], metav1.APIResource{
			Name: plural.Resource, SingularName: singular.Resource, Kind: gvk.Kind,
			Namespaced: !clusterScoped[gvk.Kind],
			Verbs:      metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"},
		})
		f.kinds[gv.Group+"/"+gv.Version+"/"+plural.Resource] = gvk
	}
	versions := map[string][]string{}
	for gv, rs := range resources {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
		path := "/apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			path = "/api/" + gv.Version
		}
		f.discovery[path] = mustJSON(metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: gv.String(), APIResources: rs,
		})
		versions[gv.Group] = append(versions[gv.Group], gv.Version)
	}
	groups := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for group, vs := range versions {
		if group == "" {
			continue
		}
		sort.Slice(vs, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(vs[i], vs[j]) > 0 })
		g := metav1.APIGroup{Name: group}
		for _, v := range vs {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		groups.Groups = append(groups.Groups, g)
	}
	sort.Slice(groups.Groups, func(i, j int) bool { return groups.Groups[i].Name < groups.Groups[j].Name })
	f.discovery["/apis"] = mustJSON(groups)
	f.discovery["/api"] = mustJSON(metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
	})
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+f.token || f.isRevoked() {
		f.mu.Lock()
		f.unauthorized++
		f.mu.Unlock()
		writeStatus(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if doc, ok := f.discovery[r.URL.Path]; ok {
		_, _ = w.Write(doc)
		return
	}
	gv, namespace, resource, name, ok := parseResourcePath(r.URL.Path)
	gvk, known := f.kinds[gv.Group+"/"+gv.Version+"/"+resource]
	if !ok || !known {
		writeStatus(w, http.StatusNotFound, "NotFound")
		return
	}
	switch {
	case r.Method == http.MethodGet && name == "" && (r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1"):
		// Nothing ever changes: hold the watch open until the client or the test goes.
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-f.closing:
		case <-f.revoked: // as an API server ends watches when it restarts
		}
	case r.Method == http.MethodGet && name == "":
		f.mu.Lock()
		f.lists[resource]++
		f.mu.Unlock()
		_, _ = w.Write(mustJSON(map[string]interface{}{
			"apiVersion": gv.String(), "kind": gvk.Kind + "List",
			"metadata": map[string]interface{}{"resourceVersion": "1"}, "items": []interface{}{},
		}))
	case r.Method == http.MethodGet && gv.Group == hubv1alpha1.GroupVersion.Group && resource == "clusters" &&
		namespace == projectNamespace && name == clusterName:
		f.mu.Lock()
		cluster := f.cluster
		f.probes++
		f.mu.Unlock()
		if cluster == nil {
			writeStatus(w, http.StatusNotFound, "NotFound")
			return
		}
		_, _ = w.Write(cluster)
	case r.Method == http.MethodPost || r.Method == http.MethodPut:
		// Events and the like: accepted as sent.
		w.WriteHeader(http.StatusCreated)
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	default:
		writeStatus(w, http.StatusNotFound, "NotFound")
	}
}

// parseResourcePath splits /api/v1/... and /apis/GROUP/VERSION/... into
// their parts; [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]].
func parseResourcePath(path string) (gv schema.GroupVersion, namespace, resource, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gv, parts = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return gv, "", "", "", false
	}
	if parts[0] == "namespaces" && len(parts) >= 3 {
		namespace, parts = parts[1], parts[2:]
	}
	resource = parts[0]
	if len(parts) > 1 {
		name = parts[1]
	}
	return gv, namespace, resource, name, true
}

// declare makes this hub publish identity at endpoint as the Active hub on
// the worker's Cluster CR; declareNothing publishes the CR without it.
func (f *fakeAPIServer) declare(identity, endpoint string) {
	f.setCluster(map[string]interface{}{
		"endpoint": endpoint, "activeIdentity": identity, "lastUpdated": "2026-08-25T16:42:00Z",
	})
}

func (f *fakeAPIServer) declareNothing() { f.setCluster(nil) }

func (f *fakeAPIServer) setCluster(activeController map[string]interface{}) {
	status := map[string]interface{}{}
	if activeController != nil {
		status["activeController"] = activeController
	}
	b := mustJSON(map[string]interface{}{
		"apiVersion": hubv1alpha1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]interface{}{"name": clusterName, "namespace": projectNamespace, "resourceVersion": "1"},
		"status":   status,
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cluster = b
}

// listed reports how many LISTs of resource this server has answered.
func (f *fakeAPIServer) listed(resource string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists[resource]
}

// listedAnything reports whether this server has answered any LIST.
func (f *fakeAPIServer) listedAnything() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lists) > 0
}

// probed reports how many times the worker's Cluster CR was read by name.
func (f *fakeAPIServer) probed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.probes
}

// revoke makes the server refuse its own token from now on, as an API server
// does once the token's ServiceAccount is deleted, and ends the watches it
// holds, as a restart or a watch timeout would, so clients list again.
func (f *fakeAPIServer) revoke() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.revoked:
	default:
		close(f.revoked)
	}
}

func (f *fakeAPIServer) isRevoked() bool {
	select {
	case <-f.revoked:
		return true
	default:
		return false
	}
}

func (f *fakeAPIServer) rejected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unauthorized
}

func writeStatus(w http.ResponseWriter, code int, reason string) {
	w.WriteHeader(code)
	_, _ = w.Write(mustJSON(map[string]interface{}{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
	}))
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
