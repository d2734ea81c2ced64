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

// Helpers of holdfast's glue tests in package main, laid beside the glue
// from overlay/workeroperator: patched tree only.

package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow/hubfollowtest"
)

const (
	testProjectNamespace = "kubeslice-acme"
	testClusterName      = "worker-1"
	// testBound is how long a test waits for something that should take
	// milliseconds. It is generous because the machine may be loaded; a test
	// that hits it has found a hang, not a slow run.
	testBound = time.Minute
)

// testClaimTime is the lastUpdated of every claim the glue tests publish: a
// fixed time, as the tests never settle a disagreement by freshness.
var testClaimTime = time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC)

func testClusterPath() string {
	return "/apis/controller.kubeslice.io/v1alpha1/namespaces/" + testProjectNamespace + "/clusters/" + testClusterName
}

// testHub is a hub (hubfollowtest.Hub, which hubfollow's own tests use too)
// with its token and CA written to files as a mounted Secret would be.
type testHub struct {
	*hubfollowtest.Hub
	tokenFile string
	caFile    string
}

func newTestHub(t *testing.T, name string) *testHub {
	t.Helper()
	h := &testHub{Hub: hubfollowtest.NewHub(t, testProjectNamespace, testClusterName, "token-of-"+name)}
	dir := t.TempDir()
	h.tokenFile = writeTestFile(t, dir, "token", h.Token())
	h.caFile = writeTestFile(t, dir, "ca.crt", string(h.CAPEM()))
	return h
}

// declare makes the hub publish identity at endpoint as the Active hub.
func (h *testHub) declare(identity, endpoint string) {
	h.Publish(hubfollowtest.Claim{Identity: identity, Endpoint: endpoint, LastUpdated: testClaimTime}.StatusField())
}

func (h *testHub) declareNothing() { h.Publish(nil) }

func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hungHub accepts TCP connections and never answers: the hub that holds a
// read until the OS TCP timeout unless the reader bounds it.
func hungHub(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + ln.Addr().String()
}

// hubEnv is the worker environment for a primary and, if non-nil, a
// secondary hub, with settings overriding or adding variables.
func hubEnv(primary, secondary *testHub, settings map[string]string) map[string]string {
	env := map[string]string{
		"CLUSTER_NAME":          testClusterName,
		"HUB_PROJECT_NAMESPACE": testProjectNamespace,
		"HUB_HOST_ENDPOINT":     primary.URL(),
		"HUB_TOKEN_FILE":        primary.tokenFile,
		"HUB_CA_FILE":           primary.caFile,
	}
	if secondary != nil {
		env["HUB_SECONDARY_HOST_ENDPOINT"] = secondary.URL()
		env["HUB_SECONDARY_TOKEN_FILE"] = secondary.tokenFile
		env["HUB_SECONDARY_CA_FILE"] = secondary.caFile
	}
	for k, v := range settings {
		env[k] = v
	}
	return env
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	}
}

// recordingManager records the runnables the glue adds to the worker manager.
type recordingManager struct {
	mu    sync.Mutex
	added []manager.Runnable
}

func (m *recordingManager) Add(r manager.Runnable) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.added = append(m.added, r)
	return nil
}

func (m *recordingManager) runnables() []manager.Runnable {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]manager.Runnable(nil), m.added...)
}

// logLines collects log lines for assertions.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logLines) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func (l *logLines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitDone waits for ctx to end, failing the test after testBound.
func waitDone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(testBound):
		t.Fatalf("%s: still waiting after %s", what, testBound)
	}
}
