//go:build e2e

package karmada

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/internal/controlplane"
	"github.com/holdfast-dist/holdfast/internal/logtail"
)

const (
	// ownNamespace holds each controller-manager's own ServiceAccount on
	// the Karmada host, as upstream's chart does.
	ownNamespace = "karmada-system"
	// ownTokenTTL outlives any run; the suite revokes tokens, it does not
	// wait for them to expire.
	ownTokenTTL = time.Hour
	// startTimeout bounds a controller-manager's start until /healthz
	// answers: a few seconds idle, much longer on a runner busy compiling.
	startTimeout = 2 * time.Minute
	// stopGrace is how long a controller-manager may take to stop on
	// SIGTERM before it is killed.
	stopGrace = 10 * time.Second
)

// controllerManager is a karmada-controller-manager process under test.
type controllerManager struct {
	*controlplane.Process
	metricsURL string
	// account is its own ServiceAccount on the host (in ownNamespace).
	account string
}

// startControllerManager runs build b of karmada-controller-manager as a
// pod would: with its own ServiceAccount on the host (bound to
// cluster-admin, as upstream's chart binds it broadly) read from a token
// file. It returns once /healthz answers; the process is stopped when the
// test ends. Its log goes to the host's log folder, which is kept for the
// report when the suite fails.
func (e *env) startControllerManager(t *testing.T, b Build, name string, extra ...string) *controllerManager {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	token, err := e.host.ServiceAccountToken(ctx, ownNamespace, name, ownTokenTTL)
	if err != nil {
		t.Fatalf("controller-manager %s: own ServiceAccount: %v", name, err)
	}
	if err := e.host.BindClusterAdmin(ctx, ownNamespace, name); err != nil {
		t.Fatalf("controller-manager %s: binding its ServiceAccount: %v", name, err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := e.host.WriteTokenKubeconfig(kubeconfig, tokenFile); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(e.host.LogDir(), fmt.Sprintf("karmada-controller-manager-%s.log", name))
	for attempt := 1; ; attempt++ {
		cm, err := e.runControllerManager(ctx, b, name, dir, kubeconfig, logFile, extra)
		if cm != nil {
			t.Cleanup(func() { _ = cm.Stop(stopGrace) })
		}
		if err == nil {
			return cm
		}
		// A port chosen free may be taken before the process binds it.
		if cm == nil || !strings.Contains(cm.Log(), "address already in use") || attempt == portAttempts {
			t.Fatal(err)
		}
	}
}

// portAttempts is how often a controller-manager is started on new ports
// after one was taken.
const portAttempts = 3

// runControllerManager starts the process on two free 127.0.0.1 ports and
// waits for /healthz. It returns the process, if it started, with any error.
func (e *env) runControllerManager(ctx context.Context, b Build, name, dir, kubeconfig, logFile string, extra []string) (*controllerManager, error) {
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	healthPort, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	args, err := ControllerManagerOptions{Kubeconfig: kubeconfig, MetricsPort: metricsPort, HealthPort: healthPort, Extra: extra}.Args()
	if err != nil {
		return nil, err
	}
	p, err := controlplane.StartProcess(ctx, controlplane.ProcessOptions{
		Name:    fmt.Sprintf("karmada-controller-manager %s (%s)", name, b),
		Path:    e.binaries[b],
		Args:    args,
		Dir:     dir,
		LogFile: logFile,
	})
	if err != nil {
		return nil, err
	}
	cm := &controllerManager{Process: p, account: name, metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", healthPort)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("exited with code %d", p.ExitCode())
		}
		return httpOK(ctx, healthz), nil
	})
	if err != nil {
		return cm, fmt.Errorf("%s did not become healthy at %s: %w; log %s:\n%s", p.Name(), healthz, err, p.LogFile(), logtail.Last(p.LogFile(), 15))
	}
	return cm, nil
}

// metrics scrapes the controller-manager's metrics endpoint.
func (c *controllerManager) metrics(ctx context.Context) (Metrics, error) {
	return ScrapeMetrics(ctx, c.metricsURL)
}

func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
