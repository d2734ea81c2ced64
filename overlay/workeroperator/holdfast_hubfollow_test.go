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

// Tests of the hub-failover glue (holdfast_hubfollow.go) and of what main
// hands the hub builders (patches 0001 and 0002), laid beside the glue from
// overlay/workeroperator: patched tree only.

package main

import (
	"context"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	hubv1alpha1 "github.com/kubeslice/apis/pkg/controller/v1alpha1"
	hub "github.com/kubeslice/worker-operator/pkg/hub/hubclient"
	hubmanager "github.com/kubeslice/worker-operator/pkg/hub/manager"
	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow"
)

// hubConfigChild marks the child process of TestHubConfigWithoutSecondaryIsV164s.
const hubConfigChild = "HOLDFAST_TEST_HUB_CONFIG_CHILD"

// TestHubConfigWithoutSecondaryIsV164s: with HUB_SECONDARY_HOST_ENDPOINT unset
// (or unusable), the config main hands both hub builders equals, field for
// field, the one v1.6.4's NewHubClientConfig and manager.Start built, and
// nothing is contacted, added to the manager or registered as a metric.
//
// v1.6.4 reads HUB_TOKEN_FILE and HUB_CA_FILE into package variables before
// main runs, so each case runs in a child process started with its
// environment, and compares against those very variables.
func TestHubConfigWithoutSecondaryIsV164s(t *testing.T) {
	if os.Getenv(hubConfigChild) == "1" {
		compareHubConfigWithV164s(t)
		return
	}
	primary := newTestHub(t, "primary")
	secondary := newTestHub(t, "secondary") // its files are mounted, its endpoint is not set
	base := map[string]string{"CLUSTER_NAME": testClusterName, "HUB_PROJECT_NAMESPACE": testProjectNamespace}
	cases := []struct {
		name string
		env  map[string]string
	}{
		{name: "endpoint, token and CA set", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL(), "HUB_TOKEN_FILE": primary.tokenFile, "HUB_CA_FILE": primary.caFile}},
		{name: "token and CA files take v1.6.4's defaults", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL()}},
		{name: "files set but empty stay empty", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL(), "HUB_TOKEN_FILE": "", "HUB_CA_FILE": ""}},
		{name: "no endpoint at all", env: map[string]string{}},
		{name: "secondary credential mounted, no secondary endpoint", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL(), "HUB_TOKEN_FILE": primary.tokenFile, "HUB_CA_FILE": primary.caFile,
			"HUB_SECONDARY_TOKEN_FILE": secondary.tokenFile, "HUB_SECONDARY_CA_FILE": secondary.caFile}},
		{name: "secondary endpoint set but empty", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL(), "HUB_SECONDARY_HOST_ENDPOINT": ""}},
		{name: "secondary names the primary (feature turns itself off)", env: map[string]string{
			"HUB_HOST_ENDPOINT": primary.URL(), "HUB_SECONDARY_HOST_ENDPOINT": primary.URL() + "/",
			"HUB_SECONDARY_TOKEN_FILE": secondary.tokenFile, "HUB_SECONDARY_CA_FILE": secondary.caFile}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHubConfigWithoutSecondaryIsV164s$", "-test.count=1", "-test.v")
			cmd.Env = append(environWithoutHubSettings(), hubConfigChild+"=1")
			for k, v := range base {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			for k, v := range tc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestHubConfigWithoutSecondaryIsV164s") {
				t.Errorf("child process (err %v):\n%s", err, out)
			}
		})
	}
	if n := primary.Requests.Load() + secondary.Requests.Load(); n != 0 {
		t.Errorf("without a usable secondary no hub may be contacted at startup; hubs saw %d requests", n)
	}
}

// compareHubConfigWithV164s runs in the child process, through main's own
// entry point (holdfastFollowHub) and controller-runtime's registry.
func compareHubConfigWithV164s(t *testing.T) {
	mgr := &recordingRunnablesManager{}
	signals := context.Background()
	ctx, conn := holdfastFollowHub(signals, mgr)

	got := conn.RESTConfig()
	// v1.6.4 pkg/hub/hubclient/hubclient.go NewHubClientConfig, verbatim.
	v164HubClient := &rest.Config{
		Host:            os.Getenv("HUB_HOST_ENDPOINT"),
		BearerTokenFile: hub.HubTokenFile,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: hub.HubCAFile,
		}}
	// v1.6.4 pkg/hub/manager/manager.go Start, verbatim.
	v164HubManager := &rest.Config{
		Host:            os.Getenv("HUB_HOST_ENDPOINT"),
		BearerTokenFile: hubmanager.HubTokenFile,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: hubmanager.HubCAFile,
		},
	}
	if !reflect.DeepEqual(got, v164HubClient) {
		t.Errorf("hub client config:\n got %#v\nwant %#v (v1.6.4 NewHubClientConfig)", got, v164HubClient)
	}
	if !reflect.DeepEqual(got, v164HubManager) {
		t.Errorf("hub manager config:\n got %#v\nwant %#v (v1.6.4 manager.Start)", got, v164HubManager)
	}
	if conn.Name != hubfollow.PrimaryName {
		t.Errorf("connected to %s, want the primary", conn)
	}
	if ctx != signals {
		t.Errorf("the managers run under a context other than the signal handler's")
	}
	if r := mgr.runnables(); len(r) != 0 {
		t.Errorf("added %d runnables to the worker manager, want none", len(r))
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "kubeslice_worker_hub_") {
			t.Errorf("registered %s without a secondary hub", f.GetName())
		}
	}
}

// environWithoutHubSettings is this process's environment minus every
// variable the worker's hub connection reads, so only a case's own apply.
func environWithoutHubSettings() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HUB_") || strings.HasPrefix(kv, "CLUSTER_NAME=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// recordingRunnablesManager is a manager.Manager that only records Add; the
// glue calls nothing else on it.
type recordingRunnablesManager struct {
	manager.Manager
	recordingManager
}

func (m *recordingRunnablesManager) Add(r manager.Runnable) error { return m.recordingManager.Add(r) }

func TestStartupTakesTheDeclaredHub(t *testing.T) {
	cases := []struct {
		name    string
		declare func(primary, secondary *testHub)
		want    string
	}{
		{
			name: "both hubs declare the secondary",
			declare: func(primary, secondary *testHub) {
				primary.declare("hub-b", secondary.URL())
				secondary.declare("hub-b", secondary.URL())
			},
			want: hubfollow.SecondaryName,
		},
		{
			name: "only the secondary declares, itself",
			declare: func(primary, secondary *testHub) {
				secondary.declare("hub-b", secondary.URL())
			},
			want: hubfollow.SecondaryName,
		},
		{
			name: "both hubs declare the primary",
			declare: func(primary, secondary *testHub) {
				primary.declare("hub-a", primary.URL())
				secondary.declare("hub-a", primary.URL())
			},
			want: hubfollow.PrimaryName,
		},
		{
			name:    "nobody declares: the primary, as v1.6.4",
			declare: func(primary, secondary *testHub) {},
			want:    hubfollow.PrimaryName,
		},
		{
			name: "a claim outside the configured pair has no say",
			declare: func(primary, secondary *testHub) {
				secondary.declare("hub-x", "https://hub-x.example.com:6443")
			},
			want: hubfollow.PrimaryName,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			primary, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
			tc.declare(primary, secondary)
			// Two confirmations: startup must still take the first winner as it stands.
			env := hubEnv(primary, secondary, map[string]string{"HUB_SWITCH_CONFIRMATIONS": "2"})
			mgr := &recordingManager{}
			reg := prometheus.NewRegistry()

			ctx, conn, err := holdfastResolveHub(context.Background(), lookupIn(env), logr.Discard(), reg, mgr)
			if err != nil {
				t.Fatal(err)
			}
			if conn.Name != tc.want {
				t.Fatalf("connected to %s, want the %s", conn, tc.want)
			}
			chosen := primary
			if tc.want == hubfollow.SecondaryName {
				chosen = secondary
			}
			want := &rest.Config{Host: chosen.URL(), BearerTokenFile: chosen.tokenFile,
				TLSClientConfig: rest.TLSClientConfig{CAFile: chosen.caFile}}
			if got := conn.RESTConfig(); !reflect.DeepEqual(got, want) {
				t.Errorf("hub config:\n got %#v\nwant %#v (the chosen hub's endpoint with its own token and CA)", got, want)
			}
			if err := ctx.Err(); err != nil {
				t.Errorf("the managers' context ended at startup: %v", err)
			}
			runnables := mgr.runnables()
			if len(runnables) != 1 {
				t.Fatalf("added %d runnables to the worker manager, want the follower", len(runnables))
			}
			if le, ok := runnables[0].(interface{ NeedLeaderElection() bool }); !ok || le.NeedLeaderElection() {
				t.Errorf("the follower must run on every replica, not only the leader")
			}
			if got := gaugeValue(t, reg, "kubeslice_worker_hub_active", tc.want); got != 1 {
				t.Errorf("kubeslice_worker_hub_active{hub=%q} = %v, want 1", tc.want, got)
			}
		})
	}
}

// TestConfirmedSwitchEndsTheManagersContext drives the follower as the worker
// manager would, and checks that a confirmed change of hub ends the context
// both managers run under (main then returns: exit 0) and nothing sooner.
func TestConfirmedSwitchEndsTheManagersContext(t *testing.T) {
	primary, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
	primary.declare("hub-a", primary.URL())
	secondary.declare("hub-a", primary.URL())
	env := hubEnv(primary, secondary, map[string]string{
		"HUB_SWITCH_CONFIRMATIONS": "2",
		"HUB_RESOLVE_INTERVAL":     "20ms",
		"HUB_RESOLVE_TIMEOUT":      "10s",
	})
	logs := &logLines{}
	log := funcr.New(logs.add, funcr.Options{})
	mgr := &recordingManager{}
	reg := prometheus.NewRegistry()

	ctx, conn, err := holdfastResolveHub(context.Background(), lookupIn(env), log, reg, mgr)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Name != hubfollow.PrimaryName {
		t.Fatalf("connected to %s, want the primary", conn)
	}
	runnables := mgr.runnables()
	if len(runnables) != 1 {
		t.Fatalf("added %d runnables, want the follower", len(runnables))
	}
	// The manager starts its runnables under (a child of) the context it runs under.
	runCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	returned := make(chan error, 1)
	go func() { returned <- runnables[0].Start(runCtx) }()

	// Wait for a few polls that name the connected hub: nothing may happen.
	waitFor(t, func() bool { return primary.Requests.Load() >= 4 && secondary.Requests.Load() >= 4 }, "polls of both hubs")
	if err := ctx.Err(); err != nil {
		t.Fatalf("the managers' context ended while both hubs named the connected one: %v", err)
	}

	secondary.declare("hub-b", secondary.URL())
	primary.declare("hub-b", secondary.URL())
	waitDone(t, ctx, "the managers' context after a confirmed change of hub")
	select {
	case err := <-returned:
		if err != nil {
			t.Errorf("follower returned %v, want nil (a switch is not an error)", err)
		}
	case <-time.After(testBound):
		t.Fatal("the follower did not return after stopping the worker")
	}
	if got := counterValue(t, reg, "kubeslice_worker_hub_switches_total"); got != 1 {
		t.Errorf("kubeslice_worker_hub_switches_total = %v, want 1", got)
	}
	if lines := logs.containing("The active hub changed"); len(lines) != 1 {
		t.Errorf("want one line announcing the switch, got %d:\n%s", len(lines), logs.all())
	}
	for _, token := range []string{primary.Token(), secondary.Token()} {
		if strings.Contains(logs.all(), token) {
			t.Errorf("a token appears in the log")
		}
	}
}

// TestStartupIsBoundedWithAHungHub: a primary that accepts connections and
// never answers holds startup for the resolve timeout, not the TCP timeout.
func TestStartupIsBoundedWithAHungHub(t *testing.T) {
	cases := []struct {
		name     string
		declared bool
		want     string
	}{
		{name: "the secondary declares itself", declared: true, want: hubfollow.SecondaryName},
		{name: "nobody declares: the primary, as v1.6.4", declared: false, want: hubfollow.PrimaryName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stand, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
			if tc.declared {
				secondary.declare("hub-b", secondary.URL())
			}
			env := hubEnv(stand, secondary, map[string]string{
				"HUB_HOST_ENDPOINT":   hungHub(t),
				"HUB_RESOLVE_TIMEOUT": "200ms",
			})
			type resolved struct {
				conn hubfollow.Connection
				err  error
			}
			done := make(chan resolved, 1)
			go func() {
				_, conn, err := holdfastResolveHub(context.Background(), lookupIn(env), logr.Discard(), prometheus.NewRegistry(), &recordingManager{})
				done <- resolved{conn, err}
			}()
			select {
			case r := <-done:
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.conn.Name != tc.want {
					t.Errorf("connected to %s, want the %s", r.conn, tc.want)
				}
			case <-time.After(testBound):
				t.Fatalf("startup still waiting on a hung hub after %s (resolve timeout 200ms)", testBound)
			}
		})
	}
}

// TestHubClientUsesTheConfigItIsGiven: the patched NewHubClientConfig talks to
// the endpoint it is given with that hub's token and CA, and nothing else.
func TestHubClientUsesTheConfigItIsGiven(t *testing.T) {
	primary, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
	secondary.declare("hub-b", secondary.URL())
	env := hubEnv(primary, secondary, nil)
	_, conn, err := holdfastResolveHub(context.Background(), lookupIn(env), logr.Discard(), prometheus.NewRegistry(), &recordingManager{})
	if err != nil {
		t.Fatal(err)
	}
	before := primary.Requests.Load()
	hubClient, err := hub.NewHubClientConfig(nil, conn.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var cluster hubv1alpha1.Cluster
	key := types.NamespacedName{Namespace: testProjectNamespace, Name: testClusterName}
	if err := hubClient.Get(context.Background(), key, &cluster); err != nil {
		t.Fatalf("reading the Cluster through the hub client: %v", err)
	}
	if n := primary.Requests.Load() - before; n != 0 {
		t.Errorf("the hub client sent %d requests to the primary, want all to the secondary", n)
	}
	for _, a := range secondary.Authorizations() {
		if a != "Bearer "+secondary.Token() {
			t.Errorf("the secondary saw a request without its own token")
		}
	}
}

// TestFollowerMetricsOnControllerRuntimeRegistry: main's entry point registers
// the follower's metrics where the worker serves /metrics.
func TestFollowerMetricsOnControllerRuntimeRegistry(t *testing.T) {
	primary, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
	for k, v := range hubEnv(primary, secondary, nil) {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holdfastFollowHub(ctx, &recordingRunnablesManager{})

	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{"kubeslice_worker_hub_switches_total", "kubeslice_worker_hub_probe_errors_total"} {
		if !names[want] {
			t.Errorf("%s is not on controller-runtime's metrics registry", want)
		}
	}
}

func counterValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	m := findMetric(t, g, name, "")
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func gaugeValue(t *testing.T, g prometheus.Gatherer, name, hubLabel string) float64 {
	t.Helper()
	m := findMetric(t, g, name, hubLabel)
	if m == nil {
		return 0
	}
	return m.GetGauge().GetValue()
}

func findMetric(t *testing.T, g prometheus.Gatherer, name, hubLabel string) *dto.Metric {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hubLabel == "" {
				return m
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "hub" && l.GetValue() == hubLabel {
					return m
				}
			}
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing the test after testBound.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, testBound, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: still waiting after %s", what, testBound)
	}
}

// TestInvalidTuningStopsStartup: a HUB_RESOLVE_* or HUB_SWITCH_CONFIRMATIONS
// value that is set and invalid is refused at startup, before either hub is
// read, with or without a secondary hub: the guard's policy for its
// variables. It used to fall back to the default with one log line.
func TestInvalidTuningStopsStartup(t *testing.T) {
	primary, secondary := newTestHub(t, "primary"), newTestHub(t, "secondary")
	env := hubEnv(primary, secondary, map[string]string{"HUB_RESOLVE_INTERVAL": "10", "HUB_SWITCH_CONFIRMATIONS": "two"})
	for _, following := range []bool{true, false} {
		if !following {
			delete(env, "HUB_SECONDARY_HOST_ENDPOINT")
		}
		mgr := &recordingManager{}
		_, _, err := holdfastResolveHub(context.Background(), lookupIn(env), logr.Discard(), prometheus.NewRegistry(), mgr)
		for _, want := range []string{`HUB_RESOLVE_INTERVAL="10": want a positive Go duration`, `HUB_SWITCH_CONFIRMATIONS="two": want a positive whole number`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("following %v: err = %v, want it to say %s", following, err, want)
			}
		}
		if len(mgr.runnables()) != 0 {
			t.Errorf("following %v: a follower was added although startup failed", following)
		}
	}
	if primary.Requests.Load() != 0 || secondary.Requests.Load() != 0 {
		t.Errorf("hubs were read (primary %d, secondary %d) although the settings were refused", primary.Requests.Load(), secondary.Requests.Load())
	}
}
