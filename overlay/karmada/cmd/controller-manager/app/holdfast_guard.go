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
// overlay/karmada. Patch 0002-own-credential-guard calls these two
// functions from Run: the first right after controllerruntime.GetConfig,
// before NewManager builds any client from the config; the second once the
// manager exists. Member cluster clients are built by
// util.BuildClusterConfig from their own rest.Config and never carry the
// guard.

package app

import (
	"k8s.io/client-go/rest"

	"github.com/karmada-io/karmada/cmd/controller-manager/app/options"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// holdfastInstallOwnCredentialGuard wraps the karmada-apiserver config with
// the own-credential guard, or returns nil for --own-credential-guard-action=off.
// Its metrics are the process's membercred metrics, on controller-runtime's
// registry, which the manager serves on --metrics-bind-address.
func holdfastInstallOwnCredentialGuard(cfg *rest.Config, opts options.OwnCredentialGuardOptions) (*membercred.OwnCredentialGuard, error) {
	return opts.Install(cfg, util.HoldfastMemberCredentialMetrics())
}

// holdfastOwnCredentialGuardCheck is the readyz check's name.
const holdfastOwnCredentialGuardCheck = options.OwnCredentialGuardReadyzCheck

// holdfastAddOwnCredentialGuardReadyz makes /readyz fail while the guard is
// tripped, for action=unhealthy.
func holdfastAddOwnCredentialGuardReadyz(mgr options.ReadyzAdder, guard *membercred.OwnCredentialGuard, opts options.OwnCredentialGuardOptions) error {
	return opts.AddReadyz(mgr, guard)
}
