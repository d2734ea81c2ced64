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

package util

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestHoldfastMetricsOnBothRegistries checks that membercred's metrics are
// in the registry each patched binary serves: controller-runtime's
// (karmada-controller-manager) and legacyregistry (karmada-search,
// karmada-metrics-adapter).
func TestHoldfastMetricsOnBothRegistries(t *testing.T) {
	if HoldfastMemberCredentialMetrics() == nil {
		t.Fatal("no metrics")
	}
	if HoldfastMemberCredentialMetrics() != HoldfastMemberCredentialMetrics() {
		t.Error("a second call made a second set of metrics")
	}
	for name, g := range map[string]prometheus.Gatherer{
		"controller-runtime": ctrlmetrics.Registry,
		"legacyregistry":     legacyregistry.DefaultGatherer,
	} {
		families, err := g.Gather()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := false
		for _, f := range families {
			// The guard's counters have no labels, so they are gathered
			// before anything is counted.
			if strings.HasPrefix(f.GetName(), "holdfast_own_credential_") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s serves no holdfast_own_credential_ metrics", name)
		}
	}
}
