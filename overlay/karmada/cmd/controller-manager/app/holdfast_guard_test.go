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

// holdfast glue test, laid into the patched tree only (overlay/karmada).

package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/karmada-io/karmada/cmd/controller-manager/app/options"
	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

type readyzRecorder map[string]healthz.Checker

func (r readyzRecorder) AddReadyzCheck(name string, check healthz.Checker) error {
	r[name] = check
	return nil
}

// rejectingAPIServer answers every request with 401, as karmada-apiserver
// does once this process's ServiceAccount was deleted.
func rejectingAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL, BearerToken: "revoked-own-token"}
}

func get(t *testing.T, cfg *rest.Config) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestHoldfastOwnCredentialGuardInstall(t *testing.T) {
	tests := []struct {
		name        string
		opts        options.OwnCredentialGuardOptions
		installed   bool
		readyz      bool
		readyAfter1 bool // readyz passes after one 401
		readyAfter2 bool // readyz passes after a second 401, past the strike spacing and MinDuration
	}{
		// MinDuration counts from the first persisting 401: one 401 never
		// trips, a second one after MinDuration (and the guard's 1s strike
		// spacing) does.
		{name: "unhealthy trips readyz once the rejection lasted MinDuration", opts: options.OwnCredentialGuardOptions{Action: "unhealthy", Threshold: 1, Window: time.Minute, MinDuration: 100 * time.Millisecond}, installed: true, readyz: true, readyAfter1: true},
		// --own-credential-guard-threshold=1 --own-credential-guard-min-duration=none
		{name: "threshold 1 without a minimum trips on the first 401", opts: options.OwnCredentialGuardOptions{Action: "unhealthy", Threshold: 1, Window: time.Minute, MinDuration: membercred.NoGuardMinDuration}, installed: true, readyz: true},
		{name: "unhealthy below threshold stays ready", opts: options.OwnCredentialGuardOptions{Action: "unhealthy", Threshold: 3, Window: time.Minute, MinDuration: 100 * time.Millisecond}, installed: true, readyz: true, readyAfter1: true, readyAfter2: true},
		// exit is not driven to its end here: it would end the test binary.
		{name: "exit installs without a readyz check", opts: options.OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: time.Minute}, installed: true},
		{name: "off installs nothing", opts: options.OwnCredentialGuardOptions{Action: "off"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := rejectingAPIServer(t)
			guard, err := holdfastInstallOwnCredentialGuard(cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := guard != nil && cfg.WrapTransport != nil; got != tc.installed {
				t.Fatalf("installed = %v, want %v", got, tc.installed)
			}
			checks := readyzRecorder{}
			if err := holdfastAddOwnCredentialGuardReadyz(checks, guard, tc.opts); err != nil {
				t.Fatal(err)
			}
			check, ok := checks[holdfastOwnCredentialGuardCheck]
			if ok != tc.readyz {
				t.Fatalf("readyz check added = %v, want %v", ok, tc.readyz)
			}
			if !ok {
				return
			}
			if err := check(nil); err != nil {
				t.Fatalf("readyz before any 401: %v", err)
			}
			get(t, cfg)
			err = check(nil)
			if (err == nil) != tc.readyAfter1 {
				t.Errorf("readyz after one persisting 401: %v, want ready=%v", err, tc.readyAfter1)
			}
			time.Sleep(1100 * time.Millisecond) // past the strike spacing; not a speed assertion
			get(t, cfg)
			err = check(nil)
			if (err == nil) != tc.readyAfter2 {
				t.Errorf("readyz after a second persisting 401 1.1s later: %v, want ready=%v", err, tc.readyAfter2)
			}
		})
	}
}

func TestHoldfastOwnCredentialGuardRejectsBadAction(t *testing.T) {
	cfg := rejectingAPIServer(t)
	if _, err := holdfastInstallOwnCredentialGuard(cfg, options.OwnCredentialGuardOptions{Action: "restart"}); err == nil {
		t.Fatal("installed with action restart")
	}
	if cfg.WrapTransport != nil {
		t.Error("a refused install wrapped the config")
	}
}
