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
// overlay/karmada. Patch 0005-estimator-follows-member-kubeconfig calls it
// from run in place of clientcmd.BuildConfigFromFlags, so the member
// clients use what the kubeconfig file (and the token, certificate and CA
// files it names) holds now rather than what it held at startup.

package app

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-io/karmada/pkg/util"
)

// holdfastBuildConfigFromFlags is clientcmd.BuildConfigFromFlags for
// --master and --kubeconfig whose credential follows the kubeconfig file.
// With --master set, or no --kubeconfig (in-cluster), it is upstream's call
// unchanged: --master overrides the file's server, which the followed
// credential would not know of.
func holdfastBuildConfigFromFlags(master, kubeconfig, clusterName string) (*rest.Config, error) {
	if master != "" || kubeconfig == "" {
		return clientcmd.BuildConfigFromFlags(master, kubeconfig)
	}
	return util.HoldfastRestConfigFromKubeconfig(kubeconfig, "", clusterName)
}
