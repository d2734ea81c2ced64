//go:build e2e

package karmada

import (
	"fmt"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/controlplane"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// env is what every scenario shares: a Karmada host (a kube-apiserver with
// Karmada's CRDs and the Cluster stand-in), one member cluster, and the two
// builds of karmada-controller-manager.
type env struct {
	target       Target
	host, member *controlplane.Cluster
	binaries     map[Build]string
	// standIn says in every scenario's notes what serves the Cluster API.
	standIn string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	target, err := LoadTarget(root)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{target: target, binaries: map[Build]string{}}
	// Both builds must be there before anything starts: a missing pristine
	// binary fails the suite rather than silently skipping its RED half.
	for _, b := range []Build{Pristine, Patched} {
		path, err := target.ControllerManager(b)
		if err != nil {
			t.Fatal(err)
		}
		e.binaries[b] = path
		v, err := BinaryVersion(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		recorder.SetVersion(fmt.Sprintf("karmada-controller-manager (%s)", b), v)
	}
	if err := target.CheckTree(); err != nil {
		t.Fatal(err)
	}
	crds, err := KarmadaCRDFiles(target.Tree)
	if err != nil {
		t.Fatal(err)
	}
	controllerGen, err := ControllerGenVersion(target.Tree)
	if err != nil {
		t.Fatal(err)
	}
	clusterCRD, err := ClusterCRD(ctx, root, target)
	if err != nil {
		t.Fatal(err)
	}
	recorder.SetVersion("controller-gen (Cluster CRD stand-in)", controllerGen)
	e.standIn = fmt.Sprintf("stand-in: the Cluster API is a CRD generated from Karmada %s's types (controller-gen %s), not karmada-aggregated-apiserver", target.Version, controllerGen)

	etcd, err := toolcache.Ensure(ctx, root, toolcache.Etcd)
	if err != nil {
		t.Fatal(err)
	}
	apiServer, err := toolcache.Ensure(ctx, root, toolcache.KubeAPIServer)
	if err != nil {
		t.Fatal(err)
	}
	recorder.SetVersion("etcd", toolcache.Etcd.Version)
	recorder.SetVersion("kube-apiserver", toolcache.KubeAPIServer.Version)

	e.host = controlplane.StartForTest(t, controlplane.Options{Name: "karmada-host", Etcd: etcd, KubeAPIServer: apiServer})
	e.member = controlplane.StartForTest(t, controlplane.Options{Name: "member1", Etcd: etcd, KubeAPIServer: apiServer})
	if err := e.host.ApplyFiles(ctx, append(crds, clusterCRD)...); err != nil {
		t.Fatalf("installing Karmada's CRDs and the Cluster stand-in on the Karmada host: %v", err)
	}
	return e
}
