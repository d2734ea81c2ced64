//go:build e2e

package karmadacp

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// TestControlPlaneJoinsAMember starts the patched control plane and a
// member, joins it in Push mode and checks what the harness promises: the
// Cluster API is the aggregated server's (no CRD serves it), the Cluster
// becomes Ready through the default controller set, and the member's
// Secret is owned by its Cluster as karmadactl leaves it.
func TestControlPlaneJoinsAMember(t *testing.T) {
	ctx := t.Context()
	o, etcd, apiServer := patchedOptions(t)
	begin := time.Now()
	cp := StartForTest(t, o)
	t.Logf("control plane ready in %s: %v", time.Since(begin).Round(100*time.Millisecond), cp.StartTimes())

	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := cp.API.Dynamic().Resource(crds).Get(ctx, "clusters.cluster.karmada.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a CRD for clusters.cluster.karmada.io: %v; the aggregated API server must serve Clusters", err)
	}
	if _, err := cp.API.Dynamic().Resource(crds).Get(ctx, "resourcebindings.work.karmada.io", metav1.GetOptions{}); err != nil {
		t.Errorf("Karmada's CRDs are not installed: %v", err)
	}

	member := controlplane.StartForTest(t, controlplane.Options{Name: "member1", Etcd: etcd, KubeAPIServer: apiServer})
	m, err := cp.JoinPush(ctx, "member1", member)
	if err != nil {
		t.Fatal(err)
	}
	joined := time.Now()
	if err := m.WaitReady(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("member1 Ready %s after the join", time.Since(joined).Round(100*time.Millisecond))
	s, err := cp.API.Kubernetes().CoreV1().Secrets(ClusterNamespace).Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := s.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Cluster" || refs[0].Name != "member1" {
		t.Errorf("Secret %s/member1 owners: %+v, want the Cluster", ClusterNamespace, refs)
	}
	for _, c := range Components {
		if p := cp.Process(c); p == nil || p.Exited() {
			t.Errorf("%s is not running", c)
		}
	}
}
