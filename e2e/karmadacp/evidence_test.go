package karmadacp

import "testing"

// Lines as karmada-controller-manager v1.18.2 logs them (from a pristine
// run of the propagation scenario).
const (
	deploymentListRefused  = `E1203 10:16:32.460714   13437 reflector.go:204] "Failed to watch" err="failed to list apps/v1, Resource=deployments: Unauthorized" reflector="k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289" type="apps/v1, Resource=deployments"`
	deploymentWatchRefused = `E1203 10:05:40.478515   29328 reflector.go:204] "Failed to watch" err="Unauthorized - error from a previous attempt: read tcp 127.0.0.1:47886->127.0.0.1:32951: read: connection reset by peer" reflector="k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289" type="apps/v1, Resource=deployments"`
	nodeListRefused        = `E1203 10:05:42.066524   29328 reflector.go:204] "Failed to watch" err="failed to list *v1.Node: Unauthorized" reflector="k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289" type="*v1.Node"`
	clusterRolesRefused    = `E1203 10:05:41.807560   29328 reflector.go:204] "Failed to watch" err="failed to list rbac.authorization.k8s.io/v1, Resource=clusterroles: Unauthorized" reflector="k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289" type="rbac.authorization.k8s.io/v1, Resource=clusterroles"`
	deploymentWatchClosed  = `I1203 10:05:40.478515   29328 reflector.go:204] "Failed to watch" err="very short watch" type="apps/v1, Resource=deployments"`
	updateConflict         = `E1203 10:15:15.102106   13437 objectwatcher.go:191] Failed to update resource(kind=Deployment, default/web) in cluster member1, err: Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again.`
	workSyncFailed         = `E1203 10:05:43.745586   29328 execution_controller.go:157] Failed to sync work(karmada-es-member1/web-7b7cc5b9ff) to cluster(member1), err: Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`
)

func TestEvidencePatterns(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want map[string]bool
	}{
		{"deployment list 401", deploymentListRefused, map[string]bool{"watch": true}},
		{"deployment watch 401", deploymentWatchRefused, map[string]bool{"watch": true}},
		{"node list 401", nodeListRefused, nil},
		{"clusterroles list 401", clusterRolesRefused, nil},
		{"deployment watch ended otherwise", deploymentWatchClosed, nil},
		{"update conflict", updateConflict, map[string]bool{"conflict": true}},
		{"work sync failed", workSyncFailed, map[string]bool{"sync": true}},
	} {
		for key, re := range map[string]interface{ MatchString(string) bool }{"watch": MemberWatchUnauthorized, "conflict": UpdateConflict, "sync": WorkSyncFailed} {
			if got := re.MatchString(tc.line); got != tc.want[key] {
				t.Errorf("%s: %s pattern matched=%v, want %v", tc.name, key, got, tc.want[key])
			}
		}
	}
}

// Lines as karmada-metrics-adapter v1.18.2 logs them (JSON, from a
// pristine run of the metrics scenario).
const (
	podListRefused      = `{"ts":1796299892109.4521,"caller":"cache/reflector.go:204","msg":"Failed to watch","reflector":"k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289","type":"*v1.Pod","err":"failed to list *v1.Pod: Unauthorized"}`
	podWatchRefused     = `{"ts":1796299888128.197,"caller":"cache/reflector.go:204","msg":"Failed to watch","reflector":"k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289","type":"*v1.Pod","err":"Unauthorized - error from a previous attempt: read tcp 127.0.0.1:35750->127.0.0.1:43749: read: connection reset by peer"}`
	nodeListRefusedJSON = `{"ts":1796299892109.4521,"caller":"cache/reflector.go:204","msg":"Failed to watch","reflector":"k8s.io/client-go@v0.35.3/tools/cache/reflector.go:289","type":"*v1.Node","err":"failed to list *v1.Node: Unauthorized"}`
	podWatchClosedJSON  = `{"ts":1796299888128.197,"caller":"cache/reflector.go:204","msg":"Failed to watch","type":"*v1.Pod","err":"very short watch"}`
	metricsQueryRefused = `{"ts":1796299902281.0452,"caller":"provider/resourcemetrics.go:139","msg":"Failed to query metrics in cluster(member1): Unauthorized"}`
	metricsQueryMissing = `{"ts":1796299902281.0452,"caller":"provider/resourcemetrics.go:139","msg":"Failed to query metrics in cluster(member1): the server could not find the requested resource"}`
)

func TestMetricsAdapterEvidencePatterns(t *testing.T) {
	for _, tc := range []struct {
		name       string
		line       string
		pod, query bool
	}{
		{"pod list 401", podListRefused, true, false},
		{"pod watch 401", podWatchRefused, true, false},
		{"node list 401", nodeListRefusedJSON, false, false},
		{"pod watch ended otherwise", podWatchClosedJSON, false, false},
		{"PodMetrics query 401", metricsQueryRefused, false, true},
		{"PodMetrics query failed otherwise", metricsQueryMissing, false, false},
		// klog's text format, keys in the other order.
		{"pod list 401 (text)", `E1203 10:16:32.460714 13437 reflector.go:204] "Failed to watch" type="*v1.Pod" err="failed to list *v1.Pod: Unauthorized"`, true, false},
	} {
		if got := PodInformerUnauthorized.MatchString(tc.line); got != tc.pod {
			t.Errorf("%s: PodInformerUnauthorized matched=%v, want %v", tc.name, got, tc.pod)
		}
		if got := MetricsQueryUnauthorized.MatchString(tc.line); got != tc.query {
			t.Errorf("%s: MetricsQueryUnauthorized matched=%v, want %v", tc.name, got, tc.query)
		}
	}
}
