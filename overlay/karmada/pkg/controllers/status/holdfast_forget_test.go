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

// holdfast glue test, laid into the patched tree only (overlay/karmada).

package status

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/fedinformer/genericmanager"
	"github.com/karmada-io/karmada/pkg/util/fedinformer/typedmanager"
	"github.com/karmada-io/karmada/pkg/util/gclient"
)

// holdfastMemberSeries counts the membercred series labelled with cluster
// on the registry karmada-controller-manager serves.
func holdfastMemberSeries(t *testing.T, cluster string) int {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
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

// TestHoldfastDeletedClusterForgetsItsCredential: when the cluster status
// controller finds a Cluster gone, it stops the cluster's informers and, with
// holdfast, drops its member credential and metric series, so a deleted
// cluster does not keep a staleness alert firing.
func TestHoldfastDeletedClusterForgetsItsCredential(t *testing.T) {
	const name = "holdfast-deleted-member"
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint: "https://127.0.0.1:6443",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
		},
	}
	secret := &corev1.Secret{Data: map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte("member-token"), clusterv1alpha1.SecretCADataKey: []byte("ca")}}
	if _, err := util.BuildClusterConfig(name,
		func(string) (*clusterv1alpha1.Cluster, error) { return cluster, nil },
		func(string, string) (*corev1.Secret, error) { return secret, nil }); err != nil {
		t.Fatalf("BuildClusterConfig: %v", err)
	}
	if n := holdfastMemberSeries(t, name); n == 0 {
		t.Fatal("no membercred series for the cluster after building its client")
	}

	c := &ClusterStatusController{
		Client:                 fake.NewClientBuilder().WithScheme(gclient.NewSchema()).Build(), // the Cluster is gone
		GenericInformerManager: genericmanager.GetInstance(),
		TypedInformerManager:   typedmanager.GetInstance(),
	}
	if _, err := c.Reconcile(context.Background(), controllerruntime.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if n := holdfastMemberSeries(t, name); n != 0 {
		t.Errorf("%d membercred series left for the deleted cluster, want 0", n)
	}
}
