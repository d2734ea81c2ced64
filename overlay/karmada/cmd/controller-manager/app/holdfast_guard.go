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
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/karmada-io/karmada/cmd/controller-manager/app/options"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// holdfastInstallOwnCredentialGuard wraps the karmada-apiserver config with
// the own-credential guard, or returns nil for --own-credential-guard-action=off.
// Its metrics are the process's membercred metrics, on controller-runtime's
// registry, which the manager serves on --metrics-bind-address.
func holdfastInstallOwnCredentialGuard(cfg *rest.Config, opts options.OwnCredentialGuardOptions) (*membercred.OwnCredentialGuard, error) {
	if opts.Action == options.OwnCredentialGuardOff {
		klog.InfoS("Own-credential guard is off")
		return nil, nil
	}
	var action membercred.GuardAction // "": membercred's default, exit
	if opts.Action != "" {
		a, err := membercred.ParseGuardAction(opts.Action)
		if err != nil {
			return nil, err
		}
		action = a
	}
	guard, err := membercred.NewOwnCredentialGuard(membercred.OwnCredentialGuardOptions{
		Threshold:   opts.Threshold,
		Window:      opts.Window,
		MinDuration: opts.MinDuration,
		Action:      action,
		Metrics:     util.HoldfastMemberCredentialMetrics(),
	})
	if err != nil {
		return nil, err
	}
	if err := guard.InstallOnOwnConfig(cfg); err != nil {
		return nil, err
	}
	klog.InfoS("Own-credential guard installed on the karmada-apiserver client", "action", opts.Action, "threshold", opts.Threshold, "window", opts.Window, "minDuration", membercred.FormatGuardMinDuration(opts.MinDuration))
	return guard, nil
}

// readyzAdder is the part of manager.Manager the guard needs.
type readyzAdder interface {
	AddReadyzCheck(name string, check healthz.Checker) error
}

// holdfastOwnCredentialGuardCheck is the readyz check's name.
const holdfastOwnCredentialGuardCheck = "own-credential"

// holdfastAddOwnCredentialGuardReadyz makes /readyz fail while the guard is
// tripped. With action=exit the process is gone before a probe would see
// it, so the check is added for action=unhealthy only.
func holdfastAddOwnCredentialGuardReadyz(mgr readyzAdder, guard *membercred.OwnCredentialGuard, opts options.OwnCredentialGuardOptions) error {
	if guard == nil || opts.Action != options.OwnCredentialGuardUnhealthy {
		return nil
	}
	return mgr.AddReadyzCheck(holdfastOwnCredentialGuardCheck, guard.Checker())
}
