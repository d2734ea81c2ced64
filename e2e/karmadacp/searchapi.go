package karmadacp

import (
	"encoding/json"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the search scenario asks karmada-search for, through
// karmada-apiserver.
const (
	// searchCachePrefix is the search API's cache path: it answers from
	// the member informers of karmada-search's ResourceRegistry controller
	// (pkg/registry/search/storage/cache.go).
	searchCachePrefix = "/apis/search.karmada.io/v1alpha1/search/cache"
	// searchProxyPrefix is the proxy path through the "karmada" proxying
	// endpoint: a resource a ResourceRegistry caches is served by the
	// proxy's own multi-cluster cache (pkg/search/proxy/store), a second,
	// separate watch of the member.
	searchProxyPrefix = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
	// cachedFromAnnotation is the annotation both paths put on what they
	// serve: the member cluster it came from
	// (clusterv1alpha1.CacheSourceAnnotationKey).
	cachedFromAnnotation = "resource.karmada.io/cached-from-cluster"
)

// DeploymentPath is the path of Deployment namespace/name under prefix
// (searchCachePrefix or searchProxyPrefix).
func DeploymentPath(prefix, namespace, name string) string {
	return fmt.Sprintf("%s/apis/apps/v1/namespaces/%s/deployments/%s", prefix, namespace, name)
}

// ResourceRegistry caches apps/v1 Deployments of clusters in karmada-search
// (the default backend: its in-memory cache, no OpenSearch).
func ResourceRegistry(name string, clusters ...string) *unstructured.Unstructured {
	names := make([]any, len(clusters))
	for i, c := range clusters {
		names[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "search.karmada.io/v1alpha1",
		"kind":       "ResourceRegistry",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"targetCluster":     map[string]any{"clusterNames": names},
			"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}},
		},
	}}
}

// CachedFrom finds the object called name in a search answer (the cache
// path answers a list, even for one name; the proxy path the object) and
// returns the cluster karmada-search says it came from; found is false
// when the answer does not hold it.
func CachedFrom(body []byte, name string) (cluster string, found bool, err error) {
	var o unstructured.Unstructured
	if err := json.Unmarshal(body, &o.Object); err != nil {
		return "", false, fmt.Errorf("a search answer that is not a JSON object: %w", err)
	}
	objs := []unstructured.Unstructured{o}
	if raw, isList := o.Object["items"]; isList {
		items, ok := raw.([]any)
		if !ok && raw != nil {
			return "", false, fmt.Errorf("a search answer whose items are %T, not a list", raw)
		}
		objs = objs[:0]
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return "", false, fmt.Errorf("a search answer with an item of type %T, not an object", it)
			}
			objs = append(objs, unstructured.Unstructured{Object: m})
		}
	}
	for _, obj := range objs {
		if obj.GetName() != name {
			continue
		}
		cluster = obj.GetAnnotations()[cachedFromAnnotation]
		if cluster == "" {
			return "", false, fmt.Errorf("%s %s has no %s annotation: not served from karmada-search's cache", obj.GetKind(), name, cachedFromAnnotation)
		}
		return cluster, true, nil
	}
	return "", false, nil
}

// SearchCacheMiss is karmada-search's cache path not finding an object in
// a member informer's cache, which it logs for every such request.
var SearchCacheMiss = regexp.MustCompile(`Failed to get apps/v1, Resource=deployments resource\([^)]*\) from cluster\([^)]*\)'s informer cache`)

// The proxy's own cache of member Deployments (the apiserver cacher of
// pkg/search/proxy/store) after the member restarted: initialized again,
// or refused as the rotated ServiceAccount (which shows the proxy's
// client carried the new token; a transient 403 while the restarted
// member's RBAC cache fills).
var (
	ProxyCacherInitialized     = regexp.MustCompile(`"cacher initialized" group="apps" resource="deployments"`)
	ProxyCacherRotatedIdentity = regexp.MustCompile(`cacher \(deployments\.apps\): .*User "system:serviceaccount:karmada-cluster:karmada-[a-z0-9-]+-rotated-[0-9]+"`)
)
