package karmadacp

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// StartForTest starts a control plane for t and stops it when t ends. Dir
// defaults to a folder under t.TempDir(). karmada-apiserver is started with
// controlplane.StartForTest, and every component logs into its log folder,
// so a failed test's logs (etcd, kube-apiserver, each component) are
// copied to _output/reports/e2e/logs/<test>/<name>/. A start failure fails
// t.
func StartForTest(t testing.TB, o Options) *ControlPlane {
	t.Helper()
	if o.Dir == "" {
		name := o.Name
		if name == "" {
			name = "karmada"
		}
		o.Dir = filepath.Join(t.TempDir(), name)
	}
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	p, err := o.newPKI(time.Now())
	if err != nil {
		t.Fatalf("karmada control plane %s: certificates: %v", o.Name, err)
	}
	// Cleanups run last-in first-out: the components registered below stop
	// before controlplane's cleanup stops the API server and copies the
	// logs, theirs included.
	api := controlplane.StartForTest(t, o.apiServerOptions(p))
	cp, err := startComponents(t.Context(), o, p, api)
	if cp != nil {
		t.Cleanup(cp.stopComponents)
	}
	if err != nil {
		t.Fatalf("karmada control plane %s: %v", o.Name, err)
	}
	return cp
}
