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
// overlay/karmada. Patch 0006-agent-follows-kubeconfig calls these from run:
// holdfastRestConfig in place of apiclient.RestConfig, the guard right after
// it (before any client is built from the config), its readiness check once
// the manager exists. The member cluster's own config (controllerruntime's)
// never carries the guard.

package app

import (
	"k8s.io/client-go/rest"

	cmoptions "github.com/karmada-io/karmada/cmd/controller-manager/app/options"
	"github.com/karmada-io/karmada/pkg/karmadactl/util/apiclient"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// holdfastRestConfig is apiclient.RestConfig whose credential follows the
// kubeconfig file: the certificate the agent's own certRotation controller
// writes into its karmada-kubeconfig Secret, or a kubeconfig an operator
// replaced, is used without a restart. --karmada-context picks the context
// followed, as it picks the one apiclient.RestConfig reads (upstream's
// artifacts/agent manifest passes it). With no kubeconfig file (in-cluster)
// it is upstream's call unchanged.
func holdfastRestConfig(context, kubeconfigPath string) (*rest.Config, error) {
	path := apiclient.KubeConfigPath(kubeconfigPath)
	if !apiclient.Exists(path) {
		return apiclient.RestConfig(context, kubeconfigPath)
	}
	return util.HoldfastRestConfigFromKubeconfig(path, context, "karmada-apiserver")
}

// holdfastInstallOwnCredentialGuard wraps the karmada-apiserver config with
// the own-credential guard, as karmada-controller-manager installs it, or
// returns nil for --own-credential-guard-action=off.
func holdfastInstallOwnCredentialGuard(cfg *rest.Config, opts cmoptions.OwnCredentialGuardOptions) (*membercred.OwnCredentialGuard, error) {
	return opts.Install(cfg, util.HoldfastMemberCredentialMetrics())
}

// holdfastAddOwnCredentialGuardReadyz makes /readyz fail while the guard is
// tripped, for action=unhealthy (with exit the process is gone first).
func holdfastAddOwnCredentialGuardReadyz(mgr cmoptions.ReadyzAdder, guard *membercred.OwnCredentialGuard, opts cmoptions.OwnCredentialGuardOptions) error {
	return opts.AddReadyz(mgr, guard)
}
