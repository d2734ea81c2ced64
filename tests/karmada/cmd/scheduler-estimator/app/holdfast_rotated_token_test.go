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

// This file is carried by holdfast into both the pristine and the patched
// Karmada tree. It uses only upstream API (the estimator's run), so it
// compiles on both: it is RED on a pristine tree (the estimator keeps the
// token its kubeconfig held at startup) and GREEN once the estimator follows
// its kubeconfig. If it ever passes on a pristine release, upstream follows a
// rotated member credential and the patch can be dropped.

package app

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karmada-io/karmada/cmd/scheduler-estimator/app/options"
)

// rotationBound is how long the estimator gets to use the rotated token.
// The patched estimator re-reads its kubeconfig at once on the first 401
// (and notices the file change within a second anyway); the bound is
// generous because the machine may be loaded.
const rotationBound = 45 * time.Second

const (
	oldToken = "holdfast-estimator-old-token"
	newToken = "holdfast-estimator-new-token"
)

// TestHoldfastEstimatorFollowsRotatedMemberToken runs the estimator against
// a member API server that, after the estimator's informers synced, accepts
// only a new token, which the estimator's kubeconfig file now holds (an
// operator rotated the member's ServiceAccount token and its Secret): the
// estimator must send the new token without a restart. Upstream's reads the
// kubeconfig once and is rejected from then on, while it keeps serving
// estimates from a cache that no longer changes.
func TestHoldfastEstimatorFollowsRotatedMemberToken(t *testing.T) {
	m := newMember()
	srv := httptest.NewTLSServer(m)
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(t, kubeconfig, srv.URL, ca, oldToken)

	opts := options.NewOptions()
	opts.KubeConfig = kubeconfig
	opts.ClusterName = "member1"
	opts.ServerPort = freePort(t)
	opts.ClusterAPIQPS, opts.ClusterAPIBurst = 50, 100
	opts.Parallelism = 1
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, opts) }()
	defer func() {
		cancel()
		m.rotate("") // end the open watches so run returns
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("the estimator did not stop within 30s of its context's end")
		}
	}()

	if !m.waitFor(oldToken, 60*time.Second) {
		t.Fatalf("the estimator never listed the member with its startup token")
	}
	// The rotation: the file holds the new token, the old one is revoked
	// and the watches it opened are closed, as a restarted member API
	// server would.
	writeKubeconfig(t, kubeconfig, srv.URL, ca, newToken)
	m.rotate(newToken)
	if !m.waitFor(newToken, rotationBound) {
		t.Fatalf("no request carried the rotated token within %s of the kubeconfig change; %d requests with the revoked token were rejected", rotationBound, m.rejectedCount())
	}
}

// member answers what the estimator's informers (nodes, pods, replicasets)
// ask: empty lists, watches that stay open until the next rotation, and 401
// for any token but the accepted one.
type member struct {
	mu       sync.Mutex
	accepted string
	seen     map[string]bool
	rejected int
	changed  chan struct{} // closed on every rotation: ends the open watches and wakes waitFor
}

func newMember() *member {
	return &member{accepted: oldToken, seen: map[string]bool{}, changed: make(chan struct{})}
}

func (m *member) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	m.mu.Lock()
	ok := token == m.accepted
	if ok && !m.seen[token] {
		m.seen[token] = true
		close(m.changed)
		m.changed = make(chan struct{})
	}
	if !ok {
		m.rejected++
	}
	changed := m.changed
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
		return
	}
	apiVersion, kind := "v1", ""
	switch {
	case strings.HasSuffix(r.URL.Path, "/nodes"):
		kind = "Node"
	case strings.HasSuffix(r.URL.Path, "/pods"):
		kind = "Pod"
	case strings.HasSuffix(r.URL.Path, "/replicasets"):
		apiVersion, kind = "apps/v1", "ReplicaSet"
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		return
	}
	if r.URL.Query().Get("watch") != "true" {
		_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"1"},"items":[]}`, kind+"List", apiVersion)
		return
	}
	if r.URL.Query().Get("sendInitialEvents") == "true" {
		// A watch-list: the initial state (nothing) ends with the bookmark.
		_, _ = fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", kind, apiVersion)
	}
	w.(http.Flusher).Flush()
	select {
	case <-changed:
	case <-r.Context().Done():
	}
}

// rotate makes token the only one accepted ("" accepts none) and ends the
// open watches.
func (m *member) rotate(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.accepted = token
	close(m.changed)
	m.changed = make(chan struct{})
}

// waitFor reports whether a request with token was accepted within bound.
func (m *member) waitFor(token string, bound time.Duration) bool {
	deadline := time.After(bound)
	for {
		m.mu.Lock()
		seen, changed := m.seen[token], m.changed
		m.mu.Unlock()
		if seen {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}

func (m *member) rejectedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rejected
}

// writeKubeconfig replaces the kubeconfig at path in one rename, as the
// kubelet's swap of a Secret volume's ..data does.
func writeKubeconfig(t *testing.T, path, server, ca, token string) {
	t.Helper()
	cfg, err := json.Marshal(map[string]interface{}{
		"apiVersion": "v1", "kind": "Config", "current-context": "member1",
		"clusters": []interface{}{map[string]interface{}{"name": "member1", "cluster": map[string]interface{}{
			"server": server, "certificate-authority": ca}}},
		"users": []interface{}{map[string]interface{}{"name": "estimator", "user": map[string]interface{}{
			"token": token}}},
		"contexts": []interface{}{map[string]interface{}{"name": "member1", "context": map[string]interface{}{
			"cluster": "member1", "user": "estimator"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// freePort is a port nothing listens on, for the estimator's gRPC server.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
