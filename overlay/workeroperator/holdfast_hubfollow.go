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
// from overlay/workeroperator. It wires the carried hubfollow library into
// main (patch 0002-follow-hub-failover); the logic and its tests live in
// holdfast's pkg/hubfollow.

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow"
)

// holdfastFollowHub decides which hub this worker talks to before any hub
// client is built, and returns that hub's connection together with the
// context both managers must run under.
//
// With HUB_SECONDARY_HOST_ENDPOINT unset it returns the primary connection
// (field for field what v1.6.4 builds) and signals itself, contacting nobody,
// registering no metric and adding nothing to mgr. With it set, it reads both
// hubs once (bounded by HUB_RESOLVE_TIMEOUT) and adds the follower to mgr; on
// a confirmed change of hub the follower cancels the returned context. That
// is the path SIGTERM takes, so a switch shuts the worker down exactly like a
// pod deletion: both managers drain, mgr.Start returns nil, main returns, the
// process exits 0, and the kubelet restarts it against the new Active.
//
// A failure here is a setup failure and exits 1, as every other one in main.
func holdfastFollowHub(signals context.Context, mgr manager.Manager) (context.Context, hubfollow.Connection) {
	log := ctrl.Log.WithName("setup")
	ctx, conn, err := holdfastResolveHub(signals, os.LookupEnv, log, ctrlmetrics.Registry, mgr)
	if err != nil {
		log.Error(err, "Could not decide which hub to connect to")
		os.Exit(1)
	}
	return ctx, conn
}

// holdfastRunnables is the part of manager.Manager the follower needs.
type holdfastRunnables interface {
	Add(manager.Runnable) error
}

// holdfastResolveHub is holdfastFollowHub with its inputs passed in and its
// failure returned, so tests can drive it without a cluster or an exit.
func holdfastResolveHub(signals context.Context, lookup hubfollow.LookupEnvFunc, log logr.Logger,
	reg prometheus.Registerer, mgr holdfastRunnables) (context.Context, hubfollow.Connection, error) {
	cfg, err := hubfollow.ConfigFromEnv(lookup, log)
	if err != nil {
		// Refused before any hub is contacted, with following on or off:
		// a typo would otherwise surface only on the day of a failover.
		return nil, hubfollow.Connection{}, err
	}
	ctx, stop := context.WithCancel(signals)
	conn, follower, err := hubfollow.Start(ctx, cfg, hubfollow.Options{Log: log, Registerer: reg, Stop: stop})
	if err != nil {
		stop()
		return nil, hubfollow.Connection{}, err
	}
	if !cfg.Enabled() {
		// Nothing follows the hubs: only a signal stops the worker, as in v1.6.4.
		stop()
		return signals, conn, nil
	}
	if err := mgr.Add(holdfastHubWatch{follower: follower}); err != nil {
		stop()
		return nil, hubfollow.Connection{}, fmt.Errorf("adding the hub follower to the manager: %w", err)
	}
	return ctx, conn, nil
}

// holdfastHubWatch runs the follower as a runnable of the worker manager, so
// it starts once that manager is running (after the hub manager was started)
// and the manager waits for it on shutdown.
type holdfastHubWatch struct {
	follower *hubfollow.Follower
}

func (w holdfastHubWatch) Start(ctx context.Context) error {
	return w.follower.Run(ctx)
}

// NeedLeaderElection is false: every replica built its own hub clients from
// the connection resolved at its startup, so every replica, leader or not,
// must restart when the Active hub moves.
func (holdfastHubWatch) NeedLeaderElection() bool {
	return false
}
