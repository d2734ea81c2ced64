//go:build e2e

package karmadacp

import (
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// patchedOptions are the options of a control plane of the default pin's
// patched build, for the harness's own tests, and the etcd and
// kube-apiserver binaries their members run.
func patchedOptions(t *testing.T) (o Options, etcd, kubeAPIServer string) {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	target, err := EnsureBinaries(t.Context(), root, Patched, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	etcd, kubeAPIServer, err = controlplane.EnsureBinaries(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Tree: target.Tree, Binaries: target.Binaries, Etcd: etcd, KubeAPIServer: kubeAPIServer}, etcd, kubeAPIServer
}

func withMetricsAdapter(o Options) Options {
	o.MetricsAdapter = true
	return o
}
