//go:build e2e

package karmadacp

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// TestMetricsAdapterAndMemberStandIn starts the patched control plane with
// karmada-metrics-adapter and a member with the metrics stand-in, and
// checks what the harness promises: every APIService of the adapter
// becomes Available, its /metrics answers over plain HTTP without
// credentials, and the member's metrics.k8s.io answers through the
// member's kube-apiserver, and stops both.
func TestMetricsAdapterAndMemberStandIn(t *testing.T) {
	ctx := t.Context()
	o, etcd, apiServer := patchedOptions(t)
	cp := StartForTest(t, withMetricsAdapter(o))
	t.Logf("karmada-metrics-adapter ready in %s", cp.StartTimes()[MetricsAdapter].Round(100*time.Millisecond))

	url := cp.MetricsURL(MetricsAdapter)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("MetricsURL(%s) = %q, want plain HTTP on loopback", MetricsAdapter, url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "karmada_build_info") {
		t.Errorf("GET %s without credentials: %s, karmada_build_info present: %v", url, resp.Status, strings.Contains(string(body), "karmada_build_info"))
	}

	objs, err := MetricsAdapterAPIServices(o.Tree, testCA, 1)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for _, o := range objs {
		if o.GetKind() != "APIService" {
			continue
		}
		for {
			as, err := cp.API.Dynamic().Resource(apiServiceGVR).Get(ctx, o.GetName(), metav1.GetOptions{})
			if err == nil && available(as) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("APIService %s not Available: %s", o.GetName(), apiServiceAvailable(cp.API, o.GetName()))
				break
			}
			time.Sleep(readyPoll)
		}
	}

	mm, err := NewMemberMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	member := controlplane.StartForTest(t, controlplane.Options{Name: "member1", Etcd: etcd, KubeAPIServer: apiServer, ExtraAPIServerFlags: mm.APIServerFlags()})
	t.Cleanup(func() { _ = mm.Close() })
	if err := mm.Start(ctx, member, time.Minute); err != nil {
		t.Fatal(err)
	}

	cp.stopComponents()
	if p := cp.Process(MetricsAdapter); !p.Exited() {
		t.Errorf("%s still runs after the control plane's components stopped", MetricsAdapter)
	}
}

func available(as *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(as.Object, "status", "conditions")
	for _, raw := range conds {
		c, _ := raw.(map[string]any)
		if c["type"] == "Available" {
			return c["status"] == "True"
		}
	}
	return false
}
