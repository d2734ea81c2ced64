package karmadacp

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCachedFrom(t *testing.T) {
	for name, tc := range map[string]struct {
		body        string
		wantCluster string
		wantFound   bool
		wantErr     string
	}{
		"cache path, hit": {body: `{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{},"items":[
			{"kind":"Deployment","metadata":{"name":"other","annotations":{"resource.karmada.io/cached-from-cluster":"member2"}}},
			{"kind":"Deployment","metadata":{"name":"web","annotations":{"resource.karmada.io/cached-from-cluster":"member1"}}}]}`,
			wantCluster: "member1", wantFound: true},
		"cache path, miss":       {body: `{"kind":"DeploymentList","items":[]}`},
		"cache path, null items": {body: `{"kind":"DeploymentList","items":null}`},
		"proxy path, hit": {body: `{"kind":"Deployment","metadata":{"name":"web","annotations":{"resource.karmada.io/cached-from-cluster":"member1"}}}`,
			wantCluster: "member1", wantFound: true},
		"not from the cache":   {body: `{"kind":"Deployment","metadata":{"name":"web"}}`, wantErr: "no resource.karmada.io/cached-from-cluster annotation"},
		"not JSON":             {body: `<html>`, wantErr: "not a JSON object"},
		"items not a list":     {body: `{"items":{}}`, wantErr: "not a list"},
		"an item not a object": {body: `{"items":[1]}`, wantErr: "not an object"},
	} {
		t.Run(name, func(t *testing.T) {
			cluster, found, err := CachedFrom([]byte(tc.body), "web")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || cluster != tc.wantCluster || found != tc.wantFound {
				t.Errorf("got %q %v %v, want %q %v", cluster, found, err, tc.wantCluster, tc.wantFound)
			}
		})
	}
}

func TestDeploymentPath(t *testing.T) {
	if got := DeploymentPath(searchCachePrefix, "default", "web"); got != "/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/namespaces/default/deployments/web" {
		t.Errorf("cache path %s", got)
	}
	if got := DeploymentPath(searchProxyPrefix, "default", "web"); got != "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/apis/apps/v1/namespaces/default/deployments/web" {
		t.Errorf("proxy path %s", got)
	}
}

func TestResourceRegistry(t *testing.T) {
	r := ResourceRegistry("deployments", "member1")
	clusters, _, _ := unstructured.NestedStringSlice(r.Object, "spec", "targetCluster", "clusterNames")
	sel, _, _ := unstructured.NestedSlice(r.Object, "spec", "resourceSelectors")
	if len(clusters) != 1 || clusters[0] != "member1" || len(sel) != 1 {
		t.Fatalf("registry %v", r.Object)
	}
	s := sel[0].(map[string]any)
	if s["apiVersion"] != "apps/v1" || s["kind"] != "Deployment" || s["namespace"] != nil {
		t.Errorf("selector %v, want every apps/v1 Deployment", s)
	}
	if _, found, _ := unstructured.NestedMap(r.Object, "spec", "backendStore"); found {
		t.Error("a backend store: the scenario tests karmada-search's own cache")
	}
}

func TestSearchCacheMiss(t *testing.T) {
	line := `E1203 12:00:00.000000   1 cache.go:120] Failed to get apps/v1, Resource=deployments resource(default/after) from cluster(member1)'s informer cache: deployment.apps "after" not found`
	if !SearchCacheMiss.MatchString(line) {
		t.Error("karmada-search's cache miss line does not match")
	}
}

func TestProxyCacherPatterns(t *testing.T) {
	rotated := `E1203 12:15:07.753165   16236 cacher.go:498] cacher (deployments.apps): unexpected ListAndWatch error: deployments.apps is forbidden: User "system:serviceaccount:karmada-cluster:karmada-member1-rotated-1" cannot watch resource "deployments" in API group "apps" at the cluster scope`
	if !ProxyCacherRotatedIdentity.MatchString(rotated) {
		t.Error("the proxy cacher refused as the rotated account does not match")
	}
	if ProxyCacherRotatedIdentity.MatchString(strings.Replace(rotated, "karmada-member1-rotated-1", "karmada-member1", 1)) {
		t.Error("the proxy cacher refused as the original account matches: it would not show the rotated token")
	}
	if !ProxyCacherInitialized.MatchString(`I1203 12:15:08.763583   16236 cacher.go:487] "cacher initialized" group="apps" resource="deployments"`) {
		t.Error("the proxy cacher's initialization does not match")
	}
}
