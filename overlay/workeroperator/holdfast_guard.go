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

// holdfast glue, laid into the worker-operator tree by holdfast's apply step
// from overlay/workeroperator. It puts the carried membercred own-credential
// guard on the worker cluster's config (patch 0003-own-credential-guard); the
// logic and its tests live in holdfast's pkg/membercred.

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubeslice/worker-operator/third_party/holdfast/membercred"
)

// Environment variables configuring the guard, named in the worker's style
// (HUB_*, ENABLE_WEBHOOKS, ...). Unset or empty means membercred's default;
// any other value the guard does not understand stops the worker at startup.
const (
	// holdfastEnvGuardAction is exit (default), unhealthy or off.
	holdfastEnvGuardAction = "OWN_CREDENTIAL_GUARD_ACTION"
	// holdfastEnvGuardThreshold is the number of persisting 401s in a row
	// that trip the guard, a positive whole number (default
	// membercred.DefaultGuardThreshold).
	holdfastEnvGuardThreshold = "OWN_CREDENTIAL_GUARD_THRESHOLD"
	// holdfastEnvGuardWindow is the longest time those 401s may span, a
	// positive Go duration (default membercred.DefaultGuardWindow).
	holdfastEnvGuardWindow = "OWN_CREDENTIAL_GUARD_WINDOW"
	// holdfastEnvGuardMinDuration is how long the credential must have been
	// rejected before the guard trips (plus a per-process jitter of up to
	// half of it), a positive Go duration (default
	// membercred.DefaultGuardMinDuration), or "none" for no minimum and no
	// jitter (with threshold 1: act on the first persisting 401).
	holdfastEnvGuardMinDuration = "OWN_CREDENTIAL_GUARD_MIN_DURATION"

	// holdfastGuardOff installs no guard: the worker behaves as v1.6.4 when
	// its own credential is rejected.
	holdfastGuardOff = "off"
)

// holdfastGuard is this process's one own-credential guard, or nil when it
// is off. Every worker-cluster config shares it: they all carry the same
// credential, so their 401s count towards one threshold.
type holdfastGuard struct {
	guard  *membercred.OwnCredentialGuard
	action membercred.GuardAction
}

var holdfastOwnCredentialGuard = sync.OnceValue(func() *holdfastGuard {
	log := ctrl.Log.WithName("own-credential-guard")
	g, err := holdfastNewGuard(os.LookupEnv, log, func() *membercred.Metrics { return holdfastGuardMetrics(log) })
	if err != nil {
		log.Error(err, "Could not set up the own-credential guard")
		os.Exit(1)
	}
	return g
})

// holdfastGuardMetrics registers membercred's collectors on
// controller-runtime's registry, which the worker serves on its metrics
// endpoint. The guard works without metrics, so a registration error is
// logged rather than fatal.
func holdfastGuardMetrics(log logr.Logger) *membercred.Metrics {
	m, err := membercred.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		log.Error(err, "Own-credential guard metrics are not available")
	}
	return m
}

// holdfastWorkerConfig is the worker cluster's rest.Config, loaded exactly as
// v1.6.4 loads it (ctrl.GetConfigOrDie), with the guard installed. Only the
// worker cluster's config passes through here. Hub configs are built from the
// hub connection and never carry the guard: a hub's 401 (a Standby that does
// not know this worker's token yet) must never stop the worker.
func holdfastWorkerConfig() *rest.Config {
	// The guard first: a bad OWN_CREDENTIAL_GUARD_* value stops the worker
	// before it loads or uses any credential.
	guard := holdfastOwnCredentialGuard()
	cfg := ctrl.GetConfigOrDie()
	if err := guard.install(cfg); err != nil {
		ctrl.Log.WithName("own-credential-guard").Error(err, "Could not guard the worker cluster credential")
		os.Exit(1)
	}
	return cfg
}

// holdfastAddOwnCredentialCheck makes the manager's readiness endpoint fail
// while the guard is tripped, when the guard reports rather than exits.
func holdfastAddOwnCredentialCheck(mgr manager.Manager) {
	if err := holdfastOwnCredentialGuard().addReadyzCheck(mgr); err != nil {
		ctrl.Log.WithName("own-credential-guard").Error(err, "unable to set up the own-credential ready check")
		os.Exit(1)
	}
}

// holdfastReadyzChecks is the part of manager.Manager the guard needs.
type holdfastReadyzChecks interface {
	AddReadyzCheck(name string, check healthz.Checker) error
}

// holdfastNewGuard builds the guard the environment asks for; nil when off.
// metrics is called only when the guard is on (nil: no metrics), so a worker
// with the guard off registers nothing. A setting it does not understand is
// an error: the caller stops the worker before it connects anywhere.
func holdfastNewGuard(lookup func(string) (string, bool), log logr.Logger, metrics func() *membercred.Metrics) (*holdfastGuard, error) {
	opts, off, err := holdfastGuardOptionsFromEnv(lookup)
	if err != nil {
		return nil, err
	}
	if off {
		log.Info("Own-credential guard is off", "variable", holdfastEnvGuardAction)
		return nil, nil
	}
	opts.Logger = log
	if metrics != nil {
		opts.Metrics = metrics()
	}
	g, err := membercred.NewOwnCredentialGuard(opts)
	if err != nil {
		return nil, err
	}
	log.Info("Own-credential guard is on", "action", holdfastSetting(opts.Action, membercred.DefaultGuardAction),
		"threshold", holdfastSetting(opts.Threshold, membercred.DefaultGuardThreshold),
		"window", holdfastSetting(opts.Window, membercred.DefaultGuardWindow),
		"minDuration", holdfastMinDurationSetting(opts.MinDuration))
	action := opts.Action
	if action == "" {
		action = membercred.DefaultGuardAction
	}
	return &holdfastGuard{guard: g, action: action}, nil
}

// holdfastSetting renders a setting for the startup line: its value, or,
// when left zero for membercred to fill, the default with "(default)".
func holdfastSetting[T comparable](v, def T) string {
	var zero T
	if v == zero {
		return fmt.Sprintf("%v (default)", def)
	}
	return fmt.Sprintf("%v", v)
}

// holdfastMinDurationSetting is holdfastSetting for MinDuration, which has
// one more spelling: none.
func holdfastMinDurationSetting(d time.Duration) string {
	if d == membercred.NoGuardMinDuration {
		return membercred.FormatGuardMinDuration(d)
	}
	return holdfastSetting(d, membercred.DefaultGuardMinDuration)
}

// holdfastGuardOptionsFromEnv reads the guard's settings into membercred's
// options. Unset or empty leaves a field zero, which membercred fills with
// its default, so the worker always runs with the library's defaults (and
// with any option the library adds later) unless a variable says otherwise.
//
// A value that is set and not understood is an error naming every such
// variable, its value and what is accepted, as Karmada rejects a bad
// --own-credential-guard-* flag: the guard is a safety net, and a typo that
// silently left it at another setting (or on, for "OFF") would go unnoticed
// until the day it matters. Values are matched exactly, as the worker matches
// its other variables (ENABLE_WEBHOOKS=true): no case folding and no
// trimming, so "Exit" and "exit " are refused, quoted, rather than guessed.
// Every variable is checked even with the guard off.
func holdfastGuardOptionsFromEnv(lookup func(string) (string, bool)) (opts membercred.OwnCredentialGuardOptions, off bool, err error) {
	var problems []string
	invalid := func(key, raw, want string) {
		problems = append(problems, fmt.Sprintf("%s=%q: want %s", key, raw, want))
	}
	if raw, ok := lookup(holdfastEnvGuardAction); ok && raw != "" {
		if raw == holdfastGuardOff {
			off = true
		} else if action, perr := membercred.ParseGuardAction(raw); perr != nil {
			invalid(holdfastEnvGuardAction, raw, fmt.Sprintf("%s, %s or %s",
				membercred.GuardActionExit, membercred.GuardActionUnhealthy, holdfastGuardOff))
		} else {
			opts.Action = action
		}
	}
	if raw, ok := lookup(holdfastEnvGuardThreshold); ok && raw != "" {
		n, perr := strconv.Atoi(raw)
		if perr != nil || n <= 0 {
			invalid(holdfastEnvGuardThreshold, raw, "a positive whole number such as 5")
		} else {
			opts.Threshold = n
		}
	}
	if raw, ok := lookup(holdfastEnvGuardWindow); ok && raw != "" {
		d, perr := time.ParseDuration(raw)
		if perr != nil || d <= 0 {
			invalid(holdfastEnvGuardWindow, raw, "a positive Go duration such as 5m")
		} else {
			opts.Window = d
		}
	}
	if raw, ok := lookup(holdfastEnvGuardMinDuration); ok && raw != "" {
		// 0 stays refused: "none" says no minimum without giving a value
		// this worker has always rejected a new meaning.
		d, perr := membercred.ParseGuardMinDuration(raw)
		if perr != nil || (d <= 0 && d != membercred.NoGuardMinDuration) {
			invalid(holdfastEnvGuardMinDuration, raw, "a positive Go duration such as 1m, or "+membercred.GuardMinDurationNone)
		} else {
			opts.MinDuration = d
		}
	}
	if len(problems) > 0 {
		// One line for the log, however many variables are wrong.
		return membercred.OwnCredentialGuardOptions{}, false, fmt.Errorf("invalid own-credential guard setting: %s (unset means the default)",
			strings.Join(problems, "; "))
	}
	return opts, off, nil
}

// install guards cfg; a nil guard (off) leaves it as it is.
func (g *holdfastGuard) install(cfg *rest.Config) error {
	if g == nil {
		return nil
	}
	return g.guard.InstallOnOwnConfig(cfg)
}

// addReadyzCheck adds the guard's checker to readyz with the unhealthy
// action only: with exit the process is gone before a probe could see it.
func (g *holdfastGuard) addReadyzCheck(mgr holdfastReadyzChecks) error {
	if g == nil || g.action != membercred.GuardActionUnhealthy {
		return nil
	}
	return mgr.AddReadyzCheck("own-credential", g.guard.Checker())
}
