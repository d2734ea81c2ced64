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

// Tests of the own-credential guard glue (holdfast_guard.go, patch 0003),
// laid beside it from overlay/workeroperator: patched tree only.

package main

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow"
	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow/hubfollowtest"
	"github.com/kubeslice/worker-operator/third_party/holdfast/membercred"
)

// TestGuardOptionsFromEnv: set values reach membercred's options, unset or
// empty ones stay zero (membercred's defaults), and a value that is set and
// not understood is an error naming the variable, the value and what is
// accepted, never a silent fallback.
func TestGuardOptionsFromEnv(t *testing.T) {
	defaults := membercred.OwnCredentialGuardOptions{} // every field membercred's default
	with := func(change func(*membercred.OwnCredentialGuardOptions)) membercred.OwnCredentialGuardOptions {
		o := defaults
		change(&o)
		return o
	}
	cases := []struct {
		name string
		env  map[string]string
		want membercred.OwnCredentialGuardOptions
		off  bool
	}{
		{name: "unset: the defaults", env: nil, want: defaults},
		{name: "set but empty: the defaults", env: map[string]string{
			holdfastEnvGuardAction: "", holdfastEnvGuardThreshold: "", holdfastEnvGuardWindow: ""}, want: defaults},
		{name: "exit", env: map[string]string{holdfastEnvGuardAction: "exit"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) { o.Action = membercred.GuardActionExit })},
		{name: "unhealthy", env: map[string]string{holdfastEnvGuardAction: "unhealthy"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) { o.Action = membercred.GuardActionUnhealthy })},
		{name: "off", env: map[string]string{holdfastEnvGuardAction: "off"}, off: true},
		{name: "threshold and window", env: map[string]string{holdfastEnvGuardThreshold: "3", holdfastEnvGuardWindow: "90s"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) { o.Threshold, o.Window = 3, 90*time.Second })},
		{name: "all three", env: map[string]string{
			holdfastEnvGuardAction: "unhealthy", holdfastEnvGuardThreshold: "7", holdfastEnvGuardWindow: "1h"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) {
				o.Action, o.Threshold, o.Window = membercred.GuardActionUnhealthy, 7, time.Hour
			})},
		{name: "min duration", env: map[string]string{holdfastEnvGuardMinDuration: "2m"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) { o.MinDuration = 2 * time.Minute })},
		{name: "exit on the first 401: threshold 1, no minimum", env: map[string]string{holdfastEnvGuardThreshold: "1", holdfastEnvGuardMinDuration: "none"},
			want: with(func(o *membercred.OwnCredentialGuardOptions) {
				o.Threshold, o.MinDuration = 1, membercred.NoGuardMinDuration
			})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, off, err := holdfastGuardOptionsFromEnv(lookupIn(tc.env))
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if off != tc.off {
				t.Fatalf("off = %v, want %v", off, tc.off)
			}
			if !tc.off && (got.Action != tc.want.Action || got.Threshold != tc.want.Threshold || got.Window != tc.want.Window || got.MinDuration != tc.want.MinDuration) {
				t.Errorf("options = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestGuardRejectsUnknownSettings: a typo in a guard variable stops the
// worker at startup (holdfastNewGuard fails, before any guard, metric or
// connection exists) with one line that names the variable, quotes the
// value and lists what is accepted. Values are matched exactly: a
// different case or a stray space is refused, not guessed.
func TestGuardRejectsUnknownSettings(t *testing.T) {
	const actions = "want exit, unhealthy or off"
	cases := []struct {
		name string
		env  map[string]string
		want []string // in the error, in this order
	}{
		{name: "OFF", env: map[string]string{holdfastEnvGuardAction: "OFF"},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION="OFF"`, actions}},
		{name: "false", env: map[string]string{holdfastEnvGuardAction: "false"},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION="false"`, actions}},
		{name: "capitalised", env: map[string]string{holdfastEnvGuardAction: "Exit"},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION="Exit"`, actions}},
		{name: "trailing space", env: map[string]string{holdfastEnvGuardAction: "exit "},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION="exit "`, actions}},
		{name: "leading space", env: map[string]string{holdfastEnvGuardAction: " off"},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION=" off"`, actions}},
		{name: "zero threshold", env: map[string]string{holdfastEnvGuardThreshold: "0"},
			want: []string{`OWN_CREDENTIAL_GUARD_THRESHOLD="0"`, "want a positive whole number"}},
		{name: "negative threshold", env: map[string]string{holdfastEnvGuardThreshold: "-2"},
			want: []string{`OWN_CREDENTIAL_GUARD_THRESHOLD="-2"`, "want a positive whole number"}},
		{name: "threshold not a number", env: map[string]string{holdfastEnvGuardThreshold: "five"},
			want: []string{`OWN_CREDENTIAL_GUARD_THRESHOLD="five"`, "want a positive whole number"}},
		{name: "window without a unit", env: map[string]string{holdfastEnvGuardWindow: "300"},
			want: []string{`OWN_CREDENTIAL_GUARD_WINDOW="300"`, "want a positive Go duration"}},
		{name: "zero window", env: map[string]string{holdfastEnvGuardWindow: "0s"},
			want: []string{`OWN_CREDENTIAL_GUARD_WINDOW="0s"`, "want a positive Go duration"}},
		{name: "negative window", env: map[string]string{holdfastEnvGuardWindow: "-5m"},
			want: []string{`OWN_CREDENTIAL_GUARD_WINDOW="-5m"`, "want a positive Go duration"}},
		{name: "min duration without a unit", env: map[string]string{holdfastEnvGuardMinDuration: "60"},
			want: []string{`OWN_CREDENTIAL_GUARD_MIN_DURATION="60"`, "want a positive Go duration"}},
		{name: "zero min duration", env: map[string]string{holdfastEnvGuardMinDuration: "0"},
			want: []string{`OWN_CREDENTIAL_GUARD_MIN_DURATION="0"`, "want a positive Go duration such as 1m, or none"}},
		{name: "capitalised none", env: map[string]string{holdfastEnvGuardMinDuration: "None"},
			want: []string{`OWN_CREDENTIAL_GUARD_MIN_DURATION="None"`, "or none"}},
		{name: "off does not excuse a bad threshold", env: map[string]string{holdfastEnvGuardAction: "off", holdfastEnvGuardThreshold: "x"},
			want: []string{`OWN_CREDENTIAL_GUARD_THRESHOLD="x"`}},
		{name: "every value wrong: all named in one line", env: map[string]string{
			holdfastEnvGuardAction: "crash", holdfastEnvGuardThreshold: "many", holdfastEnvGuardWindow: "soon"},
			want: []string{`OWN_CREDENTIAL_GUARD_ACTION="crash"`, `OWN_CREDENTIAL_GUARD_THRESHOLD="many"`, `OWN_CREDENTIAL_GUARD_WINDOW="soon"`}},
		{name: "one value wrong among good ones", env: map[string]string{
			holdfastEnvGuardAction: "unhealthy", holdfastEnvGuardThreshold: "7", holdfastEnvGuardWindow: "soon"},
			want: []string{`OWN_CREDENTIAL_GUARD_WINDOW="soon"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logLines{}
			metricsAsked := false
			g, err := holdfastNewGuard(lookupIn(tc.env), funcr.New(logs.add, funcr.Options{}),
				func() *membercred.Metrics { metricsAsked = true; return nil })
			if err == nil {
				t.Fatalf("%v was accepted (guard %v); want a startup error. Log:\n%s", tc.env, g, logs.all())
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("the error spans lines; want one: %q", msg)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q lacks %q (in order)", msg, w)
				}
				at += i + len(w)
			}
			if g != nil || metricsAsked {
				t.Errorf("a guard was built (metrics registered: %v) despite the error", metricsAsked)
			}
		})
	}
}

// testWorkerAPI is the worker cluster's API server: it answers 401 until
// accept is set, as after the worker's ServiceAccount was recreated.
type testWorkerAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	accepted bool
}

func newTestWorkerAPI(t *testing.T) *testWorkerAPI {
	t.Helper()
	a := &testWorkerAPI{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		accepted := a.accepted
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !accepted {
			hubfollowtest.WriteStatus(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kubeslice-system"}}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *testWorkerAPI) accept() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.accepted = true
}

// config is the worker's own config: a static token, as from a kubeconfig.
func (a *testWorkerAPI) config() *rest.Config {
	cfg := &rest.Config{Host: a.srv.URL, BearerToken: "worker-token"}
	cfg.TLSClientConfig.CAData = certPEMOf(a.srv)
	return cfg
}

func certPEMOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func getNamespace(cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "kubeslice-system", metav1.GetOptions{})
	return err
}

// recordingReadyz records the readiness checks added to the manager.
type recordingReadyz struct {
	checks map[string]healthz.Checker
}

func (r *recordingReadyz) AddReadyzCheck(name string, check healthz.Checker) error {
	if r.checks == nil {
		r.checks = map[string]healthz.Checker{}
	}
	r.checks[name] = check
	return nil
}

// TestUnhealthyGuardFailsReadyzOnTheWorkerCredentialOnly: with
// action=unhealthy the worker's own 401s make readyz fail until a request is
// accepted again, while a hub's 401s, on a config built from the hub
// connection as main builds every hub client, never touch the guard.
func TestUnhealthyGuardFailsReadyzOnTheWorkerCredentialOnly(t *testing.T) {
	env := map[string]string{holdfastEnvGuardAction: "unhealthy", holdfastEnvGuardThreshold: "1", holdfastEnvGuardMinDuration: "100ms"}
	g, err := holdfastNewGuard(lookupIn(env), logr.Discard(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readyz := &recordingReadyz{}
	if err := g.addReadyzCheck(readyz); err != nil {
		t.Fatal(err)
	}
	check := readyz.checks["own-credential"]
	if check == nil {
		t.Fatalf("no own-credential readyz check; checks: %v", readyz.checks)
	}

	// A hub that rejects this worker: its 401s are the follower's business.
	hubAPI, dir := newTestWorkerAPI(t), t.TempDir()
	hubConfig := hubfollow.Connection{
		Name:      hubfollow.PrimaryName,
		Endpoint:  hubAPI.srv.URL,
		TokenFile: writeTestFile(t, dir, "token", "hub-token"),
		CAFile:    writeTestFile(t, dir, "ca.crt", string(certPEMOf(hubAPI.srv))),
	}.RESTConfig()
	for i := 0; i < 3; i++ {
		if err := getNamespace(hubConfig); err == nil {
			t.Fatal("the hub accepted a rejected token")
		}
	}
	if err := check(nil); err != nil {
		t.Fatalf("a hub's 401s tripped the worker's own-credential guard: %v", err)
	}

	worker := newTestWorkerAPI(t)
	cfg := worker.config()
	if err := g.install(cfg); err != nil {
		t.Fatal(err)
	}
	if err := getNamespace(cfg); err == nil {
		t.Fatal("the worker API accepted a rejected token")
	}
	// The rejection must also have lasted MinDuration; the guard counts
	// 401s at most once a second. Not a speed assertion.
	time.Sleep(1100 * time.Millisecond)
	if err := getNamespace(cfg); err == nil {
		t.Fatal("the worker API accepted a rejected token")
	}
	if err := check(nil); err == nil {
		t.Fatal("readyz passes while the worker's own credential is rejected")
	} else if strings.Contains(err.Error(), "worker-token") {
		t.Errorf("the readyz error shows the token: %v", err)
	}
	worker.accept()
	if err := getNamespace(cfg); err != nil {
		t.Fatal(err)
	}
	if err := check(nil); err != nil {
		t.Errorf("readyz still fails after the credential was accepted again: %v", err)
	}
}

// TestGuardWithoutMinimumActsOnTheFirst401: OWN_CREDENTIAL_GUARD_THRESHOLD=1
// with OWN_CREDENTIAL_GUARD_MIN_DURATION=none acts on the first persisting
// 401, with no second 401 and no wait.
func TestGuardWithoutMinimumActsOnTheFirst401(t *testing.T) {
	env := map[string]string{holdfastEnvGuardAction: "unhealthy", holdfastEnvGuardThreshold: "1", holdfastEnvGuardMinDuration: "none"}
	g, err := holdfastNewGuard(lookupIn(env), logr.Discard(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readyz := &recordingReadyz{}
	if err := g.addReadyzCheck(readyz); err != nil {
		t.Fatal(err)
	}
	worker := newTestWorkerAPI(t)
	cfg := worker.config()
	if err := g.install(cfg); err != nil {
		t.Fatal(err)
	}
	if err := getNamespace(cfg); err == nil {
		t.Fatal("the worker API accepted a rejected token")
	}
	if err := readyz.checks["own-credential"](nil); err == nil {
		t.Fatal("readyz passes after the first persisting 401 with threshold 1 and no minimum")
	}
}

func TestGuardActionDecidesTheReadyzCheck(t *testing.T) {
	cases := []struct {
		action     string
		installs   bool // also: its metrics are registered
		readyCheck bool
	}{
		{action: "", installs: true, readyCheck: false}, // exit: gone before a probe could see it
		{action: "exit", installs: true, readyCheck: false},
		{action: "unhealthy", installs: true, readyCheck: true},
		{action: "off", installs: false, readyCheck: false},
	}
	for _, tc := range cases {
		t.Run("action="+tc.action, func(t *testing.T) {
			metricsAsked := false
			newMetrics := func() *membercred.Metrics { metricsAsked = true; return nil }
			g, err := holdfastNewGuard(lookupIn(map[string]string{holdfastEnvGuardAction: tc.action}), logr.Discard(), newMetrics)
			if err != nil {
				t.Fatal(err)
			}
			if metricsAsked != tc.installs {
				t.Errorf("metrics registered = %v, want %v", metricsAsked, tc.installs)
			}
			cfg := &rest.Config{Host: "https://worker.example:6443"}
			if err := g.install(cfg); err != nil {
				t.Fatal(err)
			}
			if installed := cfg.WrapTransport != nil; installed != tc.installs {
				t.Errorf("guard installed = %v, want %v", installed, tc.installs)
			}
			readyz := &recordingReadyz{}
			if err := g.addReadyzCheck(readyz); err != nil {
				t.Fatal(err)
			}
			if has := readyz.checks["own-credential"] != nil; has != tc.readyCheck {
				t.Errorf("readyz check added = %v, want %v", has, tc.readyCheck)
			}
		})
	}
}

// TestWorkerConfigIsGetConfigOrDiesWithTheGuard: main's entry point loads the
// worker config as v1.6.4 does and guards it.
func TestWorkerConfigIsGetConfigOrDiesWithTheGuard(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: worker, cluster: {server: "https://worker.example:6443"}}]
users: [{name: worker, user: {token: worker-token}}]
contexts: [{name: worker, context: {cluster: worker, user: worker}}]
current-context: worker
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv(holdfastEnvGuardAction, "unhealthy")

	cfg := holdfastWorkerConfig()
	if cfg.Host != "https://worker.example:6443" || cfg.BearerToken != "worker-token" {
		t.Errorf("worker config is not the kubeconfig's: host %q", cfg.Host)
	}
	if cfg.WrapTransport == nil {
		t.Error("the worker config carries no guard")
	}
	second := holdfastWorkerConfig()
	if second == cfg || second.WrapTransport == nil {
		t.Error("each call must return its own guarded config")
	}
}
