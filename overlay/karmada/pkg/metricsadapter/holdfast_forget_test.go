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

// holdfast glue test, laid into the patched tree only (overlay/karmada): the
// pristine tree has no member credential to keep or forget.

package metricsadapter

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"

	clusterV1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/fedinformer/genericmanager"
	"github.com/karmada-io/karmada/pkg/util/fedinformer/typedmanager"
)

// holdfastSeries returns how many membercred series of cluster
// karmada-metrics-adapter serves, and the value of its persisted-401 counter
// (the one the shipped alerts watch).
func holdfastSeries(t *testing.T, cluster string) (series int, persisted float64) {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "holdfast_member_credential_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "cluster" || l.GetValue() != cluster {
					continue
				}
				series++
				if f.GetName() == "holdfast_member_credential_unauthorized_persisted_total" {
					persisted = m.GetCounter().GetValue()
				}
			}
		}
	}
	return series, persisted
}

// holdfastNoDiscovery stands in for the discovery clients; the paths under
// test only remove them.
type holdfastNoDiscovery struct{}

func (holdfastNoDiscovery) Get(string) *discovery.DiscoveryClient { return nil }
func (holdfastNoDiscovery) Set(string) error                      { return nil }
func (holdfastNoDiscovery) Remove(string)                         {}

// holdfastRejectedMember builds a client of a member cluster whose API server
// rejects the token its Secret holds, and sends one request through it, so
// the cluster has a persisted 401 on record. It returns a function sending
// one more request through that same client.
func holdfastRejectedMember(t *testing.T, cluster *clusterV1alpha1.Cluster) (again func()) {
	t.Helper()
	secret := &corev1.Secret{Data: map[string][]byte{clusterV1alpha1.SecretTokenKey: []byte("rejected-token")}}
	cfg, err := util.BuildClusterConfig(cluster.Name,
		func(string) (*clusterV1alpha1.Cluster, error) { return cluster, nil },
		func(string, string) (*corev1.Secret, error) { return secret, nil })
	if err != nil {
		t.Fatalf("BuildClusterConfig(%s): %v", cluster.Name, err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again = func() {
		t.Helper()
		resp, err := hc.Get(cfg.Host + "/api")
		if err != nil {
			t.Fatalf("GET member %s: %v", cluster.Name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("GET member %s = %d, want 401", cluster.Name, resp.StatusCode)
		}
	}
	again()
	return again
}

// TestHoldfastNotReadyClusterKeepsItsCredential: karmada-metrics-adapter
// stops a cluster's informers on every pass while it is NotReady and when
// its Ready state or access spec changes. None of these is a deletion: the
// cluster keeps its shared token source and its series, above all the
// persisted-401 counter that says why it went NotReady. Only deletion (a
// deletionTimestamp, or the Cluster gone) forgets them.
func TestHoldfastNotReadyClusterKeepsItsCredential(t *testing.T) {
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer member.Close()

	const name = "holdfast-notready-member"
	ready := &clusterV1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: clusterV1alpha1.ClusterSpec{
			APIEndpoint:                 member.URL,
			InsecureSkipTLSVerification: true,
			SecretRef:                   &clusterV1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
		},
		Status: clusterV1alpha1.ClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterV1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
		}}},
	}
	notReady := ready.DeepCopy()
	notReady.ResourceVersion = "2"
	notReady.Status.Conditions[0].Status = metav1.ConditionFalse

	again := holdfastRejectedMember(t, ready)
	series, persisted := holdfastSeries(t, name)
	if series == 0 || persisted != 1 {
		t.Fatalf("after one rejected request: %d series, persisted 401s = %v; want some and 1", series, persisted)
	}

	clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := clusters.Add(notReady); err != nil {
		t.Fatal(err)
	}
	m := &MetricsController{
		ClusterLister:         clusterlister.NewClusterLister(clusters),
		InformerManager:       genericmanager.GetInstance(),
		TypedInformerManager:  typedmanager.GetInstance(),
		MultiClusterDiscovery: holdfastNoDiscovery{},
		queue:                 workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[any]()),
	}
	defer m.queue.ShutDown()
	pass := func() {
		t.Helper()
		m.queue.Add(name)
		m.handleClusters()
	}

	m.updateCluster(ready, notReady) // Ready -> NotReady rebuilds the informers
	pass()                           // and every pass while NotReady stops them
	pass()
	changed := notReady.DeepCopy()
	changed.ResourceVersion = "3"
	changed.Spec.InsecureSkipTLSVerification = false // an access spec change rebuilds them too
	m.updateCluster(notReady, changed)

	again() // through the client built before: the source must still count
	if series, persisted := holdfastSeries(t, name); series == 0 || persisted != 2 {
		t.Errorf("NotReady and spec change: %d series, persisted 401s = %v; want the cluster's series kept and 2", series, persisted)
	}

	deleting := notReady.DeepCopy()
	deleting.ResourceVersion = "4"
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	if err := clusters.Update(deleting); err != nil {
		t.Fatal(err)
	}
	pass()
	if series, _ := holdfastSeries(t, name); series != 0 {
		t.Errorf("%d series left for a cluster being deleted, want 0", series)
	}

	holdfastRejectedMember(t, ready) // a client built again, then the Cluster is gone
	if err := clusters.Delete(deleting); err != nil {
		t.Fatal(err)
	}
	pass()
	if series, _ := holdfastSeries(t, name); series != 0 {
		t.Errorf("%d series left for a deleted cluster, want 0", series)
	}
}
