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

// holdfast glue, laid into the Karmada tree by holdfast's apply step from
// overlay/karmada. It only wires the carried membercred library into
// BuildClusterConfig (patch 0001-membercred-refreshing-token); the logic and
// its tests live in holdfast's pkg/membercred.

package util

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// holdfastMemberCredentials is the process's one token source per member
// cluster (membercred.Registry says why one per cluster, not per config).
var holdfastMemberCredentials = sync.OnceValue(func() *membercred.Registry {
	return membercred.NewRegistry(HoldfastMemberCredentialMetrics())
})

// holdfastWrapMemberCredential makes clusterConfig send the member cluster's
// bearer token as its Secret holds it now, re-read periodically and at once
// after a 401, instead of the copy BuildClusterConfig used to freeze into
// BearerToken. BuildClusterConfig calls it after the proxy-header wrapper,
// which must see the bare *http.Transport. The token just read costs the
// shared source no extra read; a token other than the one it holds makes it
// re-read the Secret.
func holdfastWrapMemberCredential(clusterConfig *rest.Config, cluster *clusterv1alpha1.Cluster,
	secretGetter func(string, string) (*corev1.Secret, error), initialToken string) error {
	source, err := holdfastMemberCredentials().Source(membercred.SecretTokenSourceOptions{
		Cluster:      cluster.Name,
		Namespace:    cluster.Spec.SecretRef.Namespace,
		Name:         cluster.Spec.SecretRef.Name,
		Getter:       secretGetter,
		InitialToken: initialToken,
	})
	if err != nil {
		return err
	}
	clusterConfig.Wrap(source.WrapTransport)
	return nil
}

// HoldfastForgetMemberCredential drops a deleted cluster's token source and
// its metric series. Patch 0001 calls it only where a binary learns of a
// deletion (cluster status controller, karmada-search, karmada-metrics-adapter),
// not where informers stop: a NotReady cluster's informers stop too, and its
// series, the persisted-401 counter above all, must stay.
func HoldfastForgetMemberCredential(clusterName string) {
	holdfastMemberCredentials().Forget(clusterName)
}

// holdfastTrustMemberCABundle makes clusterConfig verify the member API
// server against the caBundle its Secret holds now, read with the token by
// the cluster's shared source, instead of the CAData BuildClusterConfig
// froze into it (patch 0004-member-ca-bundle). BuildClusterConfig calls it
// last, after the token wrapper: the source exists, and TLS and proxy are
// set as upstream sets them. A config that skips verification is left as
// it is.
func holdfastTrustMemberCABundle(clusterConfig *rest.Config, clusterName string) {
	if source := holdfastMemberCredentials().Lookup(clusterName); source != nil {
		source.TrustSecretCABundle(clusterConfig)
	}
}
