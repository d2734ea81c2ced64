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
// pristine tree has no member credential to forget.

package search

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util"
)

func holdfastMemberSeries(t *testing.T, cluster string) int {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "holdfast_member_credential_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					n++
				}
			}
		}
	}
	return n
}

// TestHoldfastDeletedClusterForgetsItsCredential: karmada-search drops a
// deleted cluster's member credential and series whether or not its search
// cache registered the cluster: the search proxy builds clients of its own.
func TestHoldfastDeletedClusterForgetsItsCredential(t *testing.T) {
	for _, registered := range []bool{true, false} {
		name := "holdfast-search-unregistered"
		if registered {
			name = "holdfast-search-registered"
		}
		cluster := &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1alpha1.ClusterSpec{
				APIEndpoint:                 "https://127.0.0.1:6443",
				InsecureSkipTLSVerification: true,
				SecretRef:                   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
			},
		}
		secret := &corev1.Secret{Data: map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte("member-token")}}
		if _, err := util.BuildClusterConfig(name,
			func(string) (*clusterv1alpha1.Cluster, error) { return cluster, nil },
			func(string, string) (*corev1.Secret, error) { return secret, nil }); err != nil {
			t.Fatalf("BuildClusterConfig(%s): %v", name, err)
		}
		if n := holdfastMemberSeries(t, name); n == 0 {
			t.Fatalf("no membercred series for %s after building its client", name)
		}

		c := &Controller{queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[any]())}
		if registered {
			c.clusterRegistry.Store(name, clusterRegistry{})
		}
		c.deleteCluster(cluster)
		c.queue.ShutDown()
		if n := holdfastMemberSeries(t, name); n != 0 {
			t.Errorf("%d membercred series left for deleted cluster %s, want 0", n, name)
		}
	}
}
