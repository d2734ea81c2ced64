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
// Karmada tree. It uses only upstream API (the controller-manager's own
// cobra command), so it compiles on both: it is RED on a pristine tree (the
// controller-manager keeps running while karmada-apiserver rejects its own
// credential) and GREEN once the own-credential guard patch is applied. If it
// ever passes on a pristine release, upstream fails fast on a rejected own
// credential and the patch can be dropped.

package app

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// childEnv tells the test binary it is the controller-manager process the
// test watches, and names the kubeconfig it runs with.
const childEnv = "HOLDFAST_CONTROLLER_MANAGER_KUBECONFIG"

// exitBound is how long the controller-manager gets to stop on its own. The
// guard is tuned below to trip within seconds; the bound is generous because
// the machine may be loaded, and hitting it means the process kept running.
const exitBound = 90 * time.Second

// TestHoldfastControllerManagerExitsOnRejectedOwnCredential runs the
// controller-manager's own command against a karmada-apiserver that, once
// startup's discovery is done, answers 401 to every request, as it does once
// the controller-manager's ServiceAccount has been deleted: the process must exit 1 saying its own
// credential is rejected, so the kubelet restarts it with a fresh token.
// A controller-manager without the guard retries forever, never Ready and
// never restarted. The command runs in a child process (this test binary,
// re-executed) because the guard's exit ends the process.
func TestHoldfastControllerManagerExitsOnRejectedOwnCredential(t *testing.T) {
	if kubeconfig := os.Getenv(childEnv); kubeconfig != "" {
		runControllerManager(kubeconfig)
		return
	}
	// Startup's discovery is answered, as for a controller-manager that
	// started with a valid token; from the first other request on, every
	// request is rejected, as once its ServiceAccount is deleted.
	var rejected atomic.Int64
	var revoked atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if doc, ok := holdfastDiscovery[r.URL.Path]; ok && !revoked.Load() {
			_, _ = w.Write([]byte(doc))
			return
		}
		revoked.Store(true)
		rejected.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
	}))
	defer srv.Close()
	kubeconfig := writeKubeconfig(t, srv)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldfastControllerManagerExitsOnRejectedOwnCredential$")
	cmd.Env = append(os.Environ(), childEnv+"="+kubeconfig)
	var out syncWriter
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(exitBound):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the controller-manager was still running %s after karmada-apiserver started rejecting its own credential (%d requests rejected)", exitBound, rejected.Load())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code = %d, want 1 (the guard's exit)\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "credential is permanently rejected") {
		t.Errorf("the controller-manager exited without saying its own credential is rejected:\n%s", out.String())
	}
	if strings.Contains(out.String(), testToken) {
		t.Errorf("the token appears in the controller-manager's output")
	}
}

// runControllerManager is the child: the controller-manager's command with
// the rejecting kubeconfig. The guard's flags exist only on a patched tree;
// there they are tuned to trip within seconds instead of after a minute.
func runControllerManager(kubeconfig string) {
	cmd := NewControllerManagerCommand(context.Background())
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
	}
	for flag, value := range map[string]string{
		"own-credential-guard-threshold":    "2",
		"own-credential-guard-window":       "1m",
		"own-credential-guard-min-duration": "2s",
	} {
		if cmd.Flags().Lookup(flag) != nil {
			args = append(args, "--"+flag+"="+value)
		}
	}
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "controller-manager returned:", err)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "controller-manager returned without an error")
	os.Exit(4)
}

const testToken = "holdfast-revoked-token"

// holdfastDiscovery is what the controller-manager reads before it builds its
// manager: the core group, and no other.
var holdfastDiscovery = map[string]string{
	"/api":    `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`,
	"/apis":   `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`,
	"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"services","singularName":"service","namespaced":true,"kind":"Service","verbs":["get","list","watch"]}]}`,
}

func writeKubeconfig(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]interface{}{
		"apiVersion": "v1", "kind": "Config", "current-context": "karmada",
		"clusters": []interface{}{map[string]interface{}{"name": "karmada", "cluster": map[string]interface{}{
			"server": srv.URL, "certificate-authority": ca}}},
		"users": []interface{}{map[string]interface{}{"name": "controller-manager", "user": map[string]interface{}{
			"token": testToken}}},
		"contexts": []interface{}{map[string]interface{}{"name": "karmada", "context": map[string]interface{}{
			"cluster": "karmada", "user": "controller-manager"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncWriter collects the child's stdout and stderr, written from two
// goroutines of exec.Cmd.
type syncWriter struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
