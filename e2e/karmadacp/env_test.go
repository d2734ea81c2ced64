//go:build karmadacp

package karmadacp

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/controlplane"
	"github.com/holdfast-dist/holdfast/internal/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// env is one build's Karmada control plane and member cluster.
type env struct {
	build  karmadacp.Build
	target karmadacp.Target
	cp     *karmadacp.ControlPlane
	member *controlplane.Cluster
	// started is how long the control plane took to start (the binaries
	// found or built before).
	started time.Duration
}

// standIns are stated in every scenario's notes.
var standIns = []string{
	"stand-in: no kubelet or kube-controller-manager on the member; the suite writes the member Deployments' status (all replicas ready) through the status subresource",
	"stand-in: member tokens minted with the TokenRequest API, as no token controller fills karmadactl's ServiceAccount token Secrets",
	"left out: kube-controller-manager on karmada-apiserver, scheduler estimator, descheduler, karmada-metrics-adapter; karmada-search (run only by the search scenario); default feature gates",
}

// envOption changes the control plane's options before it starts (e.g.
// withSearch).
type envOption func(*karmadacp.Options)

func newEnv(t *testing.T, b karmadacp.Build, opts ...envOption) *env {
	t.Helper()
	ctx := t.Context()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	target, err := karmadacp.EnsureBinaries(ctx, root, b, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	o := karmadacp.Options{
		Name: "karmada-" + string(b), Tree: target.Tree, Binaries: target.Binaries,
	}
	for _, opt := range opts {
		opt(&o)
	}
	for _, c := range o.Running() {
		v, err := karmada.BinaryVersion(ctx, target.Binaries[c])
		if err != nil {
			t.Fatal(err)
		}
		recorder.SetVersion(fmt.Sprintf("%s (%s)", c, b), v)
	}
	etcd, apiServer, err := controlplane.EnsureBinaries(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	recorder.SetVersion("etcd", toolcache.Etcd.Version)
	recorder.SetVersion("kube-apiserver (karmada-apiserver and members)", toolcache.KubeAPIServer.Version)

	e := &env{build: b, target: target}
	begin := time.Now()
	o.Etcd, o.KubeAPIServer = etcd, apiServer
	e.cp = karmadacp.StartForTest(t, o)
	e.started = time.Since(begin)
	e.member = controlplane.StartForTest(t, controlplane.Options{Name: "member1-" + string(b), Etcd: etcd, KubeAPIServer: apiServer})
	return e
}
