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

// Package holdfast runs the worker-operator binary of this tree against
// stand-in API servers for the worker cluster and two hubs, and checks hub
// failover following from the outside: which hub the hub manager lists from,
// and how the process ends. Carried by holdfast from tests/workeroperator
// into both the pristine and the patched tree: it uses no holdfast code, so
// it builds on both, fails on pristine (which ignores the second hub) and
// passes once the hub-failover patches are applied. If it ever passes on a
// pristine upstream release, upstream follows hub failover and the patches
// can be dropped.
package holdfast

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	clusterName      = "worker-1"
	projectNamespace = "kubeslice-acme"
	// hubResource is listed by the hub manager once it runs against a hub,
	// and by nothing else: it tells which hub the worker connected to.
	hubResource = "workersliceconfigs"
	// bound is how long a test waits for what takes a second or two. It is
	// generous because the machine may be loaded; hitting it means a hang.
	bound = time.Minute
)

// workerBinary is this tree's worker-operator, built once by TestMain, with
// the provenance holdfast's build step stamps into it when the tree has any.
var (
	workerBinary    string
	buildVersion    string // holdfast-version from HOLDFAST-PROVENANCE; "" on pristine
	buildSeriesHash string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "holdfast-worker-operator")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workerBinary = filepath.Join(dir, "manager")
	if err := buildWorker(workerBinary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildWorker builds the module's main package, the binary upstream's image
// ships as /manager, as holdfast's build step does: with the version and
// series hash of a patched tree's HOLDFAST-PROVENANCE.
func buildWorker(out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	gomod, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("locating the module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	// -trimpath, and the CGO_ENABLED=0 holdfast's test runner sets: the
	// flags of holdfast's build, so this compile and the release build's
	// share the build cache instead of each compiling the tree's modules.
	args := []string{"build", "-trimpath", "-o", out}
	if provenance, err := os.ReadFile(filepath.Join(root, "HOLDFAST-PROVENANCE")); err == nil {
		buildVersion = provenanceField(provenance, "holdfast-version")
		buildSeriesHash = shortSeriesHash(provenanceField(provenance, "series-hash"))
	}
	if buildVersion != "" {
		// What pins.txt's `version pkg/holdfastversion ...` makes holdfast's build set.
		const pkg = "github.com/kubeslice/worker-operator/pkg/holdfastversion"
		args = append(args, "-ldflags", "-X "+pkg+".Version="+buildVersion+" -X "+pkg+".SeriesHash="+buildSeriesHash)
	}
	cmd := exec.Command(goTool, append(args, ".")...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the worker-operator in %s: %w\n%s", cmd.Dir, err, b)
	}
	return nil
}

// provenanceField returns the value of "key: value" in HOLDFAST-PROVENANCE.
func provenanceField(provenance []byte, key string) string {
	for _, line := range strings.Split(string(provenance), "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// shortSeriesHash is the form holdfast's build stamps: the first 12 hex
// digits of the h1: hash.
func shortSeriesHash(h1 string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h1, "h1:"))
	if err != nil || len(raw) < 6 {
		return ""
	}
	return hex.EncodeToString(raw)[:12]
}

// workerProcess is one run of the worker-operator binary.
type workerProcess struct {
	cmd    *exec.Cmd
	output *syncBuffer
	exited chan struct{}
}

// startWorker runs the worker against the worker API server and the hub
// environment given; the test stops it if it is still running at the end.
func startWorker(t *testing.T, workerAPI *fakeAPIServer, hubEnv map[string]string, args ...string) *workerProcess {
	t.Helper()
	if len(args) == 0 {
		args = []string{"--metrics-bind-address=0"} // "0": no metrics server
	}
	cmd := exec.Command(workerBinary, append(args, "--health-probe-bind-address=0")...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"KUBECONFIG=" + workerAPI.kubeconfig(t),
		"CLUSTER_NAME=" + clusterName,
		"HUB_PROJECT_NAMESPACE=" + projectNamespace,
		"ENABLE_WEBHOOKS=false",
		"LOG_LEVEL=INFO",
	}
	for k, v := range hubEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &workerProcess{cmd: cmd, output: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("worker-operator output:\n%s", p.output.String())
		}
	})
	return p
}

// stop ends the worker as the kubelet would: SIGTERM, then SIGKILL.
func (p *workerProcess) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(bound):
		t.Errorf("the worker ignored SIGTERM for %s", bound)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// waitExit waits for the worker to end on its own and returns its exit code.
func (p *workerProcess) waitExit(t *testing.T, why string) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(bound):
		t.Fatalf("the worker is still running %s after %s", why, bound)
		return -1
	}
}

// waitForHubManager waits until the hub manager lists from one of hubs, and
// returns that hub. Failing early is the point: a worker that exits first
// (it should not) fails the test with its output.
func waitForHubManager(t *testing.T, p *workerProcess, hubs ...*fakeAPIServer) *fakeAPIServer {
	t.Helper()
	var connected *fakeAPIServer
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		for _, h := range hubs {
			if h.listed(hubResource) > 0 {
				connected = h
				return true, nil
			}
		}
		select {
		case <-p.exited:
			return false, errors.New("the worker exited")
		default:
			return false, nil
		}
	})
	if err != nil {
		t.Fatalf("waiting for the hub manager to list %s from a hub: %v", hubResource, err)
	}
	return connected
}

// hubSettings is the environment naming a primary hub and, if non-nil, a
// secondary, each with its own token and CA file, polled quickly so the test
// does not wait for production's 10s interval.
func hubSettings(primaryEndpoint string, primary, secondary *fakeAPIServer) map[string]string {
	env := map[string]string{
		"HUB_HOST_ENDPOINT":        primaryEndpoint,
		"HUB_TOKEN_FILE":           primary.tokenFile,
		"HUB_CA_FILE":              primary.caFile,
		"HUB_RESOLVE_INTERVAL":     "100ms",
		"HUB_RESOLVE_TIMEOUT":      "1s",
		"HUB_SWITCH_CONFIRMATIONS": "2",
	}
	if secondary != nil {
		env["HUB_SECONDARY_HOST_ENDPOINT"] = secondary.URL()
		env["HUB_SECONDARY_TOKEN_FILE"] = secondary.tokenFile
		env["HUB_SECONDARY_CA_FILE"] = secondary.caFile
	}
	return env
}

// TestWorkerWithOneHub: without a secondary the worker connects to its hub
// as v1.6.4 does and stops cleanly on SIGTERM. It passes on pristine too: it
// checks that the stand-ins are good enough for the worker to run.
func TestWorkerWithOneHub(t *testing.T) {
	workerAPI, hubA := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a")
	hubA.declareNothing()
	worker := startWorker(t, workerAPI, hubSettings(hubA.URL(), hubA, nil))

	waitForHubManager(t, worker, hubA)
	if n := hubA.rejected() + workerAPI.rejected(); n != 0 {
		t.Errorf("%d requests carried the wrong credential", n)
	}
	worker.stop(t)
	if code := worker.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0", code)
	}
}

// TestWorkerReportsItsBuild: a worker built by holdfast says which release
// and patch series it carries, first thing, so its logs identify the build.
func TestWorkerReportsItsBuild(t *testing.T) {
	if buildVersion == "" {
		t.Skip("not a holdfast-patched tree: HOLDFAST-PROVENANCE has no holdfast-version")
	}
	workerAPI, hubA := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a")
	worker := startWorker(t, workerAPI, hubSettings(hubA.URL(), hubA, nil))
	waitForHubManager(t, worker, hubA)

	first, _, _ := strings.Cut(worker.output.String(), "\n")
	for _, want := range []string{`"message":"holdfast build"`, `"version":"` + buildVersion + `"`, `"seriesHash":"` + buildSeriesHash + `"`} {
		if !strings.Contains(first, want) {
			t.Errorf("first log line %s lacks %s", first, want)
		}
	}
}

// TestWorkerServesHoldfastMetrics: the follower's, the guard's and the build's
// metrics are on the worker's existing metrics endpoint.
func TestWorkerServesHoldfastMetrics(t *testing.T) {
	workerAPI, hubA, hubB := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a"), newFakeAPIServer(t, "hub-b")
	hubA.declare("hub-a", hubA.URL())
	hubB.declare("hub-a", hubA.URL())
	addr := freeLocalAddress(t)
	worker := startWorker(t, workerAPI, hubSettings(hubA.URL(), hubA, hubB), "--metrics-bind-address="+addr)
	waitForHubManager(t, worker, hubA)

	want := []string{
		`kubeslice_worker_hub_switches_total 0`,
		`kubeslice_worker_hub_probe_errors_total{hub="secondary",reason="unreachable"} 0`,
		`kubeslice_worker_hub_active{hub="primary"} 1`,
		`holdfast_own_credential_persisting_unauthorized 0`,
	}
	if buildVersion != "" {
		want = append(want, `holdfast_build_info{series_hash="`+buildSeriesHash+`",version="`+buildVersion+`"} 1`)
	}
	var body string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false, nil // not serving yet
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil && resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("scraping http://%s/metrics: %v", addr, err)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
}

// freeLocalAddress returns a loopback address with a port nothing listens on
// now. Another process may take it before the worker binds it; the worker
// then exits and the test fails saying so, rather than passing wrongly.
func freeLocalAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestWorkerStartsAgainstTheDeclaredHub: the secondary has been promoted and
// both hubs say so; with two confirmations required for a switch, startup
// still connects straight to it.
func TestWorkerStartsAgainstTheDeclaredHub(t *testing.T) {
	workerAPI, hubA, hubB := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a"), newFakeAPIServer(t, "hub-b")
	hubA.declare("hub-b", hubB.URL())
	hubB.declare("hub-b", hubB.URL())
	worker := startWorker(t, workerAPI, hubSettings(hubA.URL(), hubA, hubB))

	if got := waitForHubManager(t, worker, hubA, hubB); got != hubB {
		t.Fatalf("the hub manager connected to the primary; both hubs declare the secondary Active")
	}
	if n := hubA.rejected() + hubB.rejected(); n != 0 {
		t.Errorf("%d hub requests carried the other hub's credential", n)
	}
}

// TestWorkerExitsZeroOnAConfirmedSwitch: connected to the primary, the worker
// sees both hubs move to the secondary, stops its managers and exits 0; run
// again, as the kubelet would, it connects to the secondary.
func TestWorkerExitsZeroOnAConfirmedSwitch(t *testing.T) {
	workerAPI, hubA, hubB := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a"), newFakeAPIServer(t, "hub-b")
	hubA.declare("hub-a", hubA.URL())
	hubB.declare("hub-a", hubA.URL())
	env := hubSettings(hubA.URL(), hubA, hubB)
	worker := startWorker(t, workerAPI, env)
	if got := waitForHubManager(t, worker, hubA, hubB); got != hubA {
		t.Fatalf("the hub manager connected to the secondary; both hubs declare the primary Active")
	}
	// Startup reads both hubs before it builds any hub client.
	if hubB.probed() == 0 {
		t.Fatalf("the worker connected without reading the secondary hub's Cluster CR: it does not follow hub failover")
	}

	hubB.declare("hub-b", hubB.URL())
	hubA.declare("hub-b", hubB.URL())
	if code := worker.waitExit(t, "after both hubs declared the secondary"); code != 0 {
		t.Fatalf("exit code after a confirmed switch = %d, want 0\n%s", code, worker.output.String())
	}
	if !strings.Contains(worker.output.String(), "The active hub changed") {
		t.Errorf("the worker exited without saying why")
	}
	for _, token := range []string{hubA.token, hubB.token, workerAPI.token} {
		if strings.Contains(worker.output.String(), token) {
			t.Errorf("a token appears in the worker's output")
		}
	}

	restarted := startWorker(t, workerAPI, env)
	if got := waitForHubManager(t, restarted, hubB); got != hubB {
		t.Fatalf("after the restart the hub manager did not connect to the secondary")
	}
}

// TestWorkerStartupIsBoundedWithAHungHub: a primary that accepts connections
// and never answers holds startup for HUB_RESOLVE_TIMEOUT, not for the OS TCP
// timeout, and the worker connects to the secondary that declared itself.
func TestWorkerStartupIsBoundedWithAHungHub(t *testing.T) {
	workerAPI, standIn, hubB := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a"), newFakeAPIServer(t, "hub-b")
	hubB.declare("hub-b", hubB.URL())
	startWorker(t, workerAPI, hubSettings(hungListener(t), standIn, hubB))

	// Startup reads both hubs before the worker manager lists anything.
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		if hubB.listed(hubResource) > 0 {
			return true, nil
		}
		if workerAPI.listedAnything() && hubB.probed() == 0 {
			return false, errors.New("the worker started without reading the secondary hub's Cluster CR: it does not follow hub failover")
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for the hub manager to list %s from the secondary: %v", hubResource, err)
	}
}

// TestWorkerExitsOnRejectedOwnCredential: once the worker cluster rejects
// the worker's own credential for good (its ServiceAccount deleted), the
// worker exits 1 saying so, so the kubelet restarts it with a fresh token.
// v1.6.4 keeps running and Ready, every request to its own cluster failing
// with 401. The guard is tuned to trip within seconds (a v1.6.4 worker
// ignores these variables); the hub's credential stays valid throughout, so
// only the worker's own 401s can be what stops it.
func TestWorkerExitsOnRejectedOwnCredential(t *testing.T) {
	workerAPI, hubA := newFakeAPIServer(t, "worker"), newFakeAPIServer(t, "hub-a")
	hubA.declareNothing()
	env := hubSettings(hubA.URL(), hubA, nil)
	env["OWN_CREDENTIAL_GUARD_THRESHOLD"] = "2"
	env["OWN_CREDENTIAL_GUARD_WINDOW"] = "30s"
	env["OWN_CREDENTIAL_GUARD_MIN_DURATION"] = "2s"
	worker := startWorker(t, workerAPI, env)
	waitForHubManager(t, worker, hubA)

	workerAPI.revoke()
	code := worker.waitExit(t, "with its own credential rejected by the worker cluster")
	if code != 1 {
		t.Fatalf("exit code = %d, want 1\n%s", code, worker.output.String())
	}
	if out := worker.output.String(); !strings.Contains(out, "credential is permanently rejected") {
		t.Errorf("the worker exited without saying its own credential is rejected")
	}
	if workerAPI.rejected() == 0 {
		t.Errorf("the worker cluster rejected no request: the worker exited for another reason")
	}
}

// hungListener accepts TCP connections and never answers.
func hungListener(t *testing.T) string {
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

// syncBuffer is a bytes.Buffer safe for the process's two output streams.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
