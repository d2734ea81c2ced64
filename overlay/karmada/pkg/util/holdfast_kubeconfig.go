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
// overlay/karmada: the kubeconfig-following rest.Config that
// karmada-scheduler-estimator (its member kubeconfig) and karmada-agent (its
// karmada-apiserver kubeconfig) build their clients from.

package util

import (
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// holdfastKubeconfigMetrics are on controller-runtime's registry, which both
// the estimator's and the agent's /metrics serve. Without metrics the
// credential still works, so a registration error is only logged.
var holdfastKubeconfigMetrics = sync.OnceValue(func() *membercred.KubeconfigMetrics {
	m, err := membercred.NewKubeconfigMetrics(ctrlmetrics.Registry)
	if err != nil {
		klog.ErrorS(err, "Kubeconfig credential metrics are not available")
	}
	return m
})

// HoldfastRestConfigFromKubeconfig is clientcmd.BuildConfigFromFlags("", path)
// (with context in place of the file's current-context when not empty)
// whose token, client certificate and CA follow the kubeconfig file and the
// files it names (membercred.RestConfigFromKubeconfig). name labels its logs
// and metrics.
func HoldfastRestConfigFromKubeconfig(path, context, name string) (*rest.Config, error) {
	return membercred.RestConfigFromKubeconfig(path, membercred.KubeconfigOptions{
		Name:    name,
		Context: context,
		Metrics: holdfastKubeconfigMetrics(),
	})
}
