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
// overlay/karmada. Patch 0002-own-credential-guard adds one Options field,
// one AddFlags call and one Validate line that reach these definitions; the
// guard itself lives in the carried third_party/holdfast/membercred.

package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

// The own-credential guard's actions as flag values. "exit" and
// "unhealthy" are membercred.GuardAction values; "off" installs nothing.
const (
	OwnCredentialGuardExit      = "exit"
	OwnCredentialGuardUnhealthy = "unhealthy"
	OwnCredentialGuardOff       = "off"
)

// OwnCredentialGuardOptions configure the guard on karmada-controller-manager's
// own karmada-apiserver credential. Member cluster clients never see it.
// The zero value is valid and means the defaults, as in membercred's
// options, so that Options built in code without flags (upstream's own
// validation tests) keep validating.
type OwnCredentialGuardOptions struct {
	// Action is exit, unhealthy or off; "" means exit.
	Action string
	// Threshold is how many 401s in a row, each persisting after the
	// credential was re-read, trip the guard; 0 means 5.
	Threshold int
	// Window is the longest time the last Threshold 401s may span; 0
	// means 5m.
	Window time.Duration
	// MinDuration is how long the 401s must have persisted before the
	// guard trips, plus a per-process jitter of up to half of it; 0 means 1m,
	// membercred.NoGuardMinDuration (the flag value "none") no minimum.
	MinDuration time.Duration
}

// AddFlags adds the guard's flags. The defaults are membercred's (exit after
// 5 persisting 401s within 5m that have lasted at least 1m; see
// DefaultGuardThreshold and DefaultGuardMinDuration for why): exit,
// because a controller-manager that cannot authenticate cannot even release
// its leader lease, and a restart reads its kubeconfig and token files
// anew (a Secret volume the kubelet has updated; a projected token only
// once the kubelet renews it, docs/membercred.md).
func (o *OwnCredentialGuardOptions) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&o.Action, "own-credential-guard-action", OwnCredentialGuardExit, fmt.Sprintf(
		"What to do when karmada-apiserver keeps rejecting this process's own credential with 401 Unauthorized: "+
			"'%s' exits so the container starts again and reads its credential files anew, '%s' fails /readyz until a request is accepted again, '%s' disables the guard. "+
			"Member cluster credentials never trigger it.", OwnCredentialGuardExit, OwnCredentialGuardUnhealthy, OwnCredentialGuardOff))
	flags.IntVar(&o.Threshold, "own-credential-guard-threshold", 5,
		"How many 401 responses in a row to this process's own credential, each persisting after the credential was re-read, trip the own-credential guard.")
	flags.DurationVar(&o.Window, "own-credential-guard-window", 5*time.Minute,
		"The longest time the last --own-credential-guard-threshold 401 responses may span for the own-credential guard to trip.")
	flags.Var(membercred.NewGuardMinDurationValue(&o.MinDuration, time.Minute), "own-credential-guard-min-duration",
		"How long the own credential must have been rejected, from the first persisting 401, before the own-credential guard trips; "+
			"each process adds a random delay of up to half of it, so replicas do not exit together. "+
			"'"+membercred.GuardMinDurationNone+"' removes the minimum and the delay: with --own-credential-guard-threshold=1 the guard acts on the first persisting 401.")
}

// Validate checks the guard's flags; each message names its flag.
func (o *OwnCredentialGuardOptions) Validate() field.ErrorList {
	errs := field.ErrorList{}
	newPath := field.NewPath("Options", "OwnCredentialGuard")
	switch o.Action {
	case "", OwnCredentialGuardExit, OwnCredentialGuardUnhealthy, OwnCredentialGuardOff:
	default:
		errs = append(errs, field.Invalid(newPath.Child("Action"), o.Action, fmt.Sprintf("--own-credential-guard-action must be %q, %q or %q",
			OwnCredentialGuardExit, OwnCredentialGuardUnhealthy, OwnCredentialGuardOff)))
	}
	if o.Threshold < 0 {
		errs = append(errs, field.Invalid(newPath.Child("Threshold"), o.Threshold, "--own-credential-guard-threshold must be at least 1 (0 for the default, 5)"))
	}
	if o.Window < 0 {
		errs = append(errs, field.Invalid(newPath.Child("Window"), o.Window.String(), "--own-credential-guard-window must be greater than 0 (0 for the default, 5m)"))
	}
	if o.MinDuration < 0 && o.MinDuration != membercred.NoGuardMinDuration {
		errs = append(errs, field.Invalid(newPath.Child("MinDuration"), o.MinDuration.String(), "--own-credential-guard-min-duration must be greater than 0 (0 for the default, 1m; "+membercred.GuardMinDurationNone+" for no minimum)"))
	}
	return errs
}

// Install wraps cfg, the process's own karmada-apiserver config, with the
// guard these options describe, recording into metrics, before any client
// is built from it; it returns nil for action off. karmada-controller-manager
// and karmada-agent (patch 0006 uses this options type) both call it, so the
// two install the guard the same way.
func (o OwnCredentialGuardOptions) Install(cfg *rest.Config, metrics *membercred.Metrics) (*membercred.OwnCredentialGuard, error) {
	if o.Action == OwnCredentialGuardOff {
		klog.InfoS("Own-credential guard is off")
		return nil, nil
	}
	var action membercred.GuardAction // "": membercred's default, exit
	if o.Action != "" {
		a, err := membercred.ParseGuardAction(o.Action)
		if err != nil {
			return nil, err
		}
		action = a
	}
	guard, err := membercred.NewOwnCredentialGuard(membercred.OwnCredentialGuardOptions{
		Threshold:   o.Threshold,
		Window:      o.Window,
		MinDuration: o.MinDuration,
		Action:      action,
		Metrics:     metrics,
	})
	if err != nil {
		return nil, err
	}
	if err := guard.InstallOnOwnConfig(cfg); err != nil {
		return nil, err
	}
	klog.InfoS("Own-credential guard installed on the karmada-apiserver client", "action", o.Action, "threshold", o.Threshold, "window", o.Window, "minDuration", membercred.FormatGuardMinDuration(o.MinDuration))
	return guard, nil
}

// OwnCredentialGuardReadyzCheck is the name of the guard's readyz check.
const OwnCredentialGuardReadyzCheck = "own-credential"

// ReadyzAdder is the part of a controller-runtime manager.Manager the
// guard's readiness check needs.
type ReadyzAdder interface {
	AddReadyzCheck(name string, check healthz.Checker) error
}

// AddReadyz makes /readyz fail while guard is tripped. With action exit
// the process is gone before a probe would see it, so the check is added
// for action unhealthy only.
func (o OwnCredentialGuardOptions) AddReadyz(mgr ReadyzAdder, guard *membercred.OwnCredentialGuard) error {
	if guard == nil || o.Action != OwnCredentialGuardUnhealthy {
		return nil
	}
	return mgr.AddReadyzCheck(OwnCredentialGuardReadyzCheck, guard.Checker())
}
