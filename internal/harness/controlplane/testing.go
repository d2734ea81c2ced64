package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// LogsDir is where StartForTest copies a failed test's cluster logs,
// relative to the repository root, so CI can keep them as an artifact.
const LogsDir = "_output/reports/e2e/logs"

// StartForTest starts a cluster for t and stops it when t ends. Defaults:
// Dir is a folder under t.TempDir(); empty Etcd and KubeAPIServer are
// built or found with toolcache.Ensure. If t failed, the cluster's logs are
// copied to <root>/_output/reports/e2e/logs/<test>/<cluster>/ before the
// temporary folder goes. A start failure fails t.
func StartForTest(t testing.TB, o Options) *Cluster {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	if o.Etcd == "" || o.KubeAPIServer == "" {
		etcd, apiServer, err := EnsureBinaries(t.Context(), root)
		if err != nil {
			t.Fatal(err)
		}
		if o.Etcd == "" {
			o.Etcd = etcd
		}
		if o.KubeAPIServer == "" {
			o.KubeAPIServer = apiServer
		}
	}
	if o.Dir == "" {
		// t.TempDir registers its removal first, so it runs after the
		// Stop and log copy registered below (cleanups run last-in
		// first-out).
		o.Dir = filepath.Join(t.TempDir(), o.Name)
	}
	c, err := Start(t.Context(), o)
	if err != nil {
		copyLogsIfFailed(t, root, o.Name, layout(o.Dir).logs(), true)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		copyLogsIfFailed(t, root, c.name, c.LogDir(), false)
	})
	return c
}

// EnsureBinaries returns the etcd and kube-apiserver binaries, building
// them on first use.
func EnsureBinaries(ctx context.Context, root string) (etcd, kubeAPIServer string, err error) {
	if etcd, err = toolcache.Ensure(ctx, root, toolcache.Etcd); err != nil {
		return "", "", err
	}
	if kubeAPIServer, err = toolcache.Ensure(ctx, root, toolcache.KubeAPIServer); err != nil {
		return "", "", err
	}
	return etcd, kubeAPIServer, nil
}

var unsafePathChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func copyLogsIfFailed(t testing.TB, root, cluster, from string, failed bool) {
	if !failed && !t.Failed() {
		return
	}
	to := filepath.Join(root, LogsDir, unsafePathChars.ReplaceAllString(t.Name(), "_"), cluster)
	if err := copyDir(from, to); err != nil {
		t.Logf("copying the logs of cluster %s: %v", cluster, err)
		return
	}
	t.Logf("logs of cluster %s: %s", cluster, to)
}

func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return fmt.Errorf("copying %s: %w", e.Name(), err)
		}
	}
	return nil
}
