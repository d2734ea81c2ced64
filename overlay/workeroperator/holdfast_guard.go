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
// (HUB_*, ENABLE_WEBHOOKS, ...). Unset means the default.
const (
	// holdfastEnvGuardAction is exit (default), unhealthy or off.
	holdfastEnvGuardAction = "OWN_CREDENTIAL_GUARD_ACTION"
	// holdfastEnvGuardThreshold is the number of persisting 401s in a row
	// that trip the guard (default membercred.DefaultGuardThreshold).
	holdfastEnvGuardThreshold = "OWN_CREDENTIAL_GUARD_THRESHOLD"
	// holdfastEnvGuardWindow is the longest time those 401s may span, a Go
	// duration (default membercred.DefaultGuardWindow).
	holdfastEnvGuardWindow = "OWN_CREDENTIAL_GUARD_WINDOW"

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
	cfg := ctrl.GetConfigOrDie()
	if err := holdfastOwnCredentialGuard().install(cfg); err != nil {
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
// with the guard off registers nothing.
func holdfastNewGuard(lookup func(string) (string, bool), log logr.Logger, metrics func() *membercred.Metrics) (*holdfastGuard, error) {
	opts, off := holdfastGuardOptionsFromEnv(lookup, log)
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
	log.Info("Own-credential guard is on", "action", string(opts.Action),
		"threshold", opts.Threshold, "window", opts.Window.String())
	return &holdfastGuard{guard: g, action: opts.Action}, nil
}

// holdfastGuardOptionsFromEnv reads the guard's settings. An invalid value
// falls back to its default with one line naming the variable, as the hub
// follower's settings do: a typo must not keep a worker from starting.
// Defaults are filled in here so the startup line shows what is in force.
func holdfastGuardOptionsFromEnv(lookup func(string) (string, bool), log logr.Logger) (opts membercred.OwnCredentialGuardOptions, off bool) {
	opts = membercred.OwnCredentialGuardOptions{
		Action:    membercred.DefaultGuardAction,
		Threshold: membercred.DefaultGuardThreshold,
		Window:    membercred.DefaultGuardWindow,
	}
	invalid := func(key, raw string, def interface{}, want string) {
		log.Info("Ignoring invalid own-credential guard setting; using the default",
			"variable", key, "value", raw, "default", def, "want", want)
	}
	if raw, ok := lookup(holdfastEnvGuardAction); ok && raw != "" {
		if raw == holdfastGuardOff {
			return opts, true
		}
		action, err := membercred.ParseGuardAction(raw)
		if err != nil {
			invalid(holdfastEnvGuardAction, raw, string(opts.Action), fmt.Sprintf("%s, %s or %s",
				membercred.GuardActionExit, membercred.GuardActionUnhealthy, holdfastGuardOff))
		} else {
			opts.Action = action
		}
	}
	if raw, ok := lookup(holdfastEnvGuardThreshold); ok && raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			invalid(holdfastEnvGuardThreshold, raw, opts.Threshold, "a positive integer")
		} else {
			opts.Threshold = n
		}
	}
	if raw, ok := lookup(holdfastEnvGuardWindow); ok && raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			invalid(holdfastEnvGuardWindow, raw, opts.Window.String(), "a positive Go duration such as 5m")
		} else {
			opts.Window = d
		}
	}
	return opts, false
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
