//go:build karmadacp

package karmadacp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	// memberMetrics is the member's metrics.k8s.io stand-in
	// (withMemberMetrics), nil without.
	memberMetrics *karmadacp.MemberMetrics
}

// envOptions are what a scenario adds to the default environment.
type envOptions struct {
	// metricsAdapter runs karmada-metrics-adapter too.
	metricsAdapter bool
	// memberMetrics serves metrics.k8s.io on the member (the stand-in).
	memberMetrics bool
}

type envOption func(*envOptions)

func withMetricsAdapter() envOption { return func(o *envOptions) { o.metricsAdapter = true } }
func withMemberMetrics() envOption  { return func(o *envOptions) { o.memberMetrics = true } }

// standIns are stated in every scenario's notes.
var standIns = []string{
	"stand-in: no kubelet or kube-controller-manager on the member; the suite writes the member Deployments' status (all replicas ready) through the status subresource",
	"stand-in: member tokens minted with the TokenRequest API, as no token controller fills karmadactl's ServiceAccount token Secrets",
	"left out: kube-controller-manager on karmada-apiserver, scheduler estimator, descheduler, karmada-search, karmada-metrics-adapter (but in the metrics scenario); default feature gates",
}

func newEnv(t *testing.T, b karmadacp.Build, opts ...envOption) *env {
	t.Helper()
	var o envOptions
	for _, opt := range opts {
		opt(&o)
	}
	ctx := t.Context()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	target, err := karmadacp.EnsureBinaries(ctx, root, b, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	components := karmadacp.Components
	if o.metricsAdapter {
		components = append(slices.Clip(components), karmadacp.MetricsAdapter)
	}
	for _, c := range components {
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
	e.cp = karmadacp.StartForTest(t, karmadacp.Options{
		Name: "karmada-" + string(b), Tree: target.Tree, Binaries: target.Binaries, Etcd: etcd, KubeAPIServer: apiServer,
		MetricsAdapter: o.metricsAdapter,
	})
	e.started = time.Since(begin)
	memberOpts := controlplane.Options{Name: "member1-" + string(b), Etcd: etcd, KubeAPIServer: apiServer}
	if o.memberMetrics {
		if e.memberMetrics, err = karmadacp.NewMemberMetrics(filepath.Join(t.TempDir(), "member1-metrics")); err != nil {
			t.Fatal(err)
		}
		memberOpts.ExtraAPIServerFlags = e.memberMetrics.APIServerFlags()
	}
	e.member = controlplane.StartForTest(t, memberOpts)
	if e.memberMetrics != nil {
		t.Cleanup(func() { _ = e.memberMetrics.Close() })
		if err := e.memberMetrics.Start(ctx, e.member, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return e
}
