//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
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
	// member2 and its audit log, for the scenarios that ask for it
	// (withMember2).
	member2      *controlplane.Cluster
	member2Audit string
	// memberMetrics is the member's metrics.k8s.io stand-in
	// (withMemberMetrics), nil without.
	memberMetrics *karmadacp.MemberMetrics
	// apiAudit is karmada-apiserver's audit log (withAPIServerAudit), ""
	// without.
	apiAudit string
	// memberAudit is member1's audit log (withMemberAudit), "" without.
	memberAudit string
}

// envOptions are what a scenario adds to the default environment, so
// that the others do not pay for it.
type envOptions struct {
	// controllerManagerFlags are appended to the controller-manager's.
	controllerManagerFlags []string
	// member2 starts a second member cluster whose kube-apiserver writes
	// an audit log.
	member2 bool
	// search runs karmada-search too.
	search bool
	// metricsAdapter runs karmada-metrics-adapter too.
	metricsAdapter bool
	// memberMetrics serves metrics.k8s.io on the member (the stand-in).
	memberMetrics bool
	// apiServerAudit makes karmada-apiserver write an audit log.
	apiServerAudit bool
	// memberAudit makes member1's kube-apiserver write an audit log.
	memberAudit bool
	// csrSigning runs kube-controller-manager's csrsigning controller on
	// karmada-apiserver, which then trusts client certificates.
	csrSigning bool
}

type envOption func(*envOptions)

// withControllerManagerFlags appends flags to the controller-manager's.
func withControllerManagerFlags(flags ...string) envOption {
	return func(o *envOptions) { o.controllerManagerFlags = append(o.controllerManagerFlags, flags...) }
}

// withMember2 adds a second member cluster, whose kube-apiserver writes an
// audit log (in its log folder, so a failed test keeps it).
func withMember2() envOption        { return func(o *envOptions) { o.member2 = true } }
func withSearch() envOption         { return func(o *envOptions) { o.search = true } }
func withMetricsAdapter() envOption { return func(o *envOptions) { o.metricsAdapter = true } }
func withMemberMetrics() envOption  { return func(o *envOptions) { o.memberMetrics = true } }

// withAPIServerAudit makes karmada-apiserver write an audit log
// (env.apiAudit), in a folder of the test's.
func withAPIServerAudit() envOption { return func(o *envOptions) { o.apiServerAudit = true } }

// withMemberAudit makes member1's kube-apiserver write an audit log
// (env.memberAudit), which its restarts keep appending to.
func withMemberAudit() envOption { return func(o *envOptions) { o.memberAudit = true } }

// withCSRSigning runs kube-controller-manager's csrsigning controller on
// karmada-apiserver (karmadacp.Options.CSRSigning), for an agent whose
// certRotation controller renews its certificate.
func withCSRSigning() envOption { return func(o *envOptions) { o.csrSigning = true } }

// standIns are stated in every scenario's notes.
var standIns = []string{
	"stand-in: no kubelet or kube-controller-manager on the member; the suite writes the member Deployments' status (all replicas ready) through the status subresource",
	"stand-in: member tokens minted with the TokenRequest API, as no token controller fills karmadactl's ServiceAccount token Secrets",
	"left out: kube-controller-manager on karmada-apiserver, scheduler estimator, descheduler; karmada-search and karmada-metrics-adapter only in the scenarios about them; default feature gates",
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
	cpOpts := karmadacp.Options{
		Name: "karmada-" + string(b), Tree: target.Tree, Binaries: target.Binaries,
		Search: o.search, MetricsAdapter: o.metricsAdapter,
	}
	cpOpts.ControllerManager.Extra = o.controllerManagerFlags
	if o.csrSigning {
		cpOpts.CSRSigning = true
		cpOpts.Binaries = maps.Clone(target.Binaries)
		cpOpts.Binaries[karmadacp.CSRSigner] = toolcache.KubeAPIServer.PathOf(root, toolcache.KubeControllerManager)
		recorder.SetVersion(string(karmadacp.CSRSigner)+" (csrsigning on karmada-apiserver)", toolcache.KubeAPIServer.Version)
	}
	for _, c := range cpOpts.Running() {
		if c == karmadacp.CSRSigner {
			continue // Kubernetes', not Karmada's: recorded above
		}
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
	if o.apiServerAudit {
		dir := filepath.Join(t.TempDir(), "karmada-apiserver-audit")
		e.apiAudit = filepath.Join(dir, "audit.log")
		if cpOpts.APIServerFlags, err = controlplane.AuditFlags(dir, e.apiAudit); err != nil {
			t.Fatal(err)
		}
	}
	begin := time.Now()
	cpOpts.Etcd, cpOpts.KubeAPIServer = etcd, apiServer
	e.cp = karmadacp.StartForTest(t, cpOpts)
	e.started = time.Since(begin)
	memberOpts := controlplane.Options{Name: "member1-" + string(b), Etcd: etcd, KubeAPIServer: apiServer}
	if o.memberMetrics {
		if e.memberMetrics, err = karmadacp.NewMemberMetrics(filepath.Join(t.TempDir(), "member1-metrics")); err != nil {
			t.Fatal(err)
		}
		memberOpts.ExtraAPIServerFlags = e.memberMetrics.APIServerFlags()
	}
	if o.memberAudit {
		dir := filepath.Join(t.TempDir(), "member1-audit")
		e.memberAudit = filepath.Join(dir, "audit.log")
		flags, err := controlplane.AuditFlags(dir, e.memberAudit)
		if err != nil {
			t.Fatal(err)
		}
		memberOpts.ExtraAPIServerFlags = append(memberOpts.ExtraAPIServerFlags, flags...)
	}
	e.member = controlplane.StartForTest(t, memberOpts)
	if e.memberMetrics != nil {
		t.Cleanup(func() { _ = e.memberMetrics.Close() })
		if err := e.memberMetrics.Start(ctx, e.member, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if o.member2 {
		e.startMember2(t, etcd, apiServer)
	}
	return e
}

// rotateAndRestart is the stimulus the rotation scenarios share: m's
// credential rotated as an operator would (Member.Rotate: the new token in
// the Secret, then the old one revoked until the member rejects it),
// noted, then m's kube-apiserver SIGKILLed and restarted, so that
// every watch reconnects. atKill runs just before the kill, where a
// scenario marks the logs it reads afterwards. A failure ends the
// scenario.
func rotateAndRestart(ctx context.Context, s *e2ereport.Run, m *karmadacp.Member, atKill func()) (killed, restarted time.Time) {
	rot, err := m.Rotate(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Mark(e2ereport.EventRotation)
	s.Notef("rotated: Secret %s/%s holds a token of ServiceAccount %s; %s (the old token's) was deleted and recreated, the member rejects the old token", karmadacp.ClusterNamespace, m.Name, rot.To, rot.From)
	atKill()
	killed = time.Now()
	if err := m.API.Restart(ctx); err != nil {
		s.Fatalf("restarting %s: %v", m.Name, err)
	}
	restarted = time.Now()
	s.Timing("member-restart", restarted.Sub(killed))
	return killed, restarted
}
