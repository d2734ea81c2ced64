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
// overlay/karmada: where membercred's metrics are registered, so that each
// patched binary serves them on the endpoint it already has.

package util

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// HoldfastMemberCredentialMetrics returns the process's one set of
// membercred metrics (member token refreshes and 401s, the own-credential
// guard), registered on both registries a Karmada binary may serve:
// controller-runtime's (karmada-controller-manager's --metrics-bind-address)
// and component-base's legacyregistry (karmada-search's and
// karmada-metrics-adapter's /metrics). A registry nobody serves costs
// nothing, and registering on both means no per-binary wiring. Without
// metrics the transport still works, so a registration error is logged
// rather than failing client construction.
var HoldfastMemberCredentialMetrics = sync.OnceValue(func() *membercred.Metrics {
	m, err := membercred.NewMetrics(holdfastBothRegistries{ctrlmetrics.Registry, legacyregistry.Registerer()})
	if err != nil {
		klog.ErrorS(err, "Member credential metrics are not available")
	}
	return m
})

// holdfastBothRegistries registers every collector on each of its
// registries. component-base has no such tee, and its kubeRegistry exposes
// only the underlying prometheus.Registerer, which is what this needs.
type holdfastBothRegistries []prometheus.Registerer

func (r holdfastBothRegistries) Register(c prometheus.Collector) error {
	var errs []error
	for i, reg := range r {
		if err := reg.Register(c); err != nil {
			// An equal collector already on the first registry was put on
			// all of them by an earlier call: return the error as is, so
			// membercred adopts the existing collector.
			var already prometheus.AlreadyRegisteredError
			if i == 0 && errors.As(err, &already) {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r holdfastBothRegistries) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r holdfastBothRegistries) Unregister(c prometheus.Collector) bool {
	removed := false
	for _, reg := range r {
		removed = reg.Unregister(c) || removed
	}
	return removed
}
