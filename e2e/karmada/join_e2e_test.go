//go:build e2e

package karmada

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	// memberNamespace holds the ServiceAccounts the member grants Karmada,
	// as `karmadactl join` creates them.
	memberNamespace = "karmada-cluster"
	// memberTokenTTL outlives any run: the suite revokes, never expires.
	memberTokenTTL = time.Hour
	// cleanupTimeout bounds removing a scenario's objects after it ended
	// (the test's context is gone by then).
	cleanupTimeout = 30 * time.Second
)

// joined is a member cluster joined to the host for one scenario: its own
// Cluster object and Secret, and its own ServiceAccounts on the member, so
// scenarios never revoke each other's credentials.
type joined struct {
	PushMember
	// initialSA's token is in the Secret at join time; rotatedSA's token
	// replaces it. Both are in memberNamespace on the member.
	initialSA, rotatedSA string
}

// join joins the member under name in Push mode, the way `karmadactl join`
// does: a ServiceAccount on the member bound to cluster-admin, its token
// and the member's CA in a Secret on the host, and a Cluster pointing at
// both. The Cluster and Secret are removed when the test ends.
func (e *env) join(t *testing.T, name string) *joined {
	t.Helper()
	ctx := t.Context()
	j := &joined{
		PushMember: PushMember{Name: name, Endpoint: e.member.Endpoint(), CAData: e.member.CAData()},
		initialSA:  name + "-initial",
		rotatedSA:  name + "-rotated",
	}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	token, err := e.memberToken(ctx, j.initialSA)
	if err != nil {
		t.Fatalf("member cluster %s: %v", name, err)
	}
	if err := ensureNamespace(ctx, e.host.Kubernetes(), ClusterSecretNamespace); err != nil {
		t.Fatalf("member cluster %s: %v", name, err)
	}
	if _, err := e.host.Kubernetes().CoreV1().Secrets(ClusterSecretNamespace).Create(ctx, j.Secret(token), metav1.CreateOptions{}); err != nil {
		t.Fatalf("member cluster %s: creating Secret %s/%s: %v", name, ClusterSecretNamespace, name, err)
	}
	if _, err := e.host.Dynamic().Resource(ClusterGVR).Create(ctx, j.Cluster(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("member cluster %s: creating Cluster: %v", name, err)
	}
	t.Cleanup(func() { e.unjoin(t, name) })
	return j
}

// memberToken mints a token for ServiceAccount sa on the member (creating
// it if needed) and binds it to cluster-admin.
func (e *env) memberToken(ctx context.Context, sa string) (string, error) {
	token, err := e.member.ServiceAccountToken(ctx, memberNamespace, sa, memberTokenTTL)
	if err != nil {
		return "", err
	}
	if err := e.member.BindClusterAdmin(ctx, memberNamespace, sa); err != nil {
		return "", err
	}
	return token, nil
}

// writeToken puts token into the member's Secret on the host, as an
// operator rotating the credential would.
func (e *env) writeToken(ctx context.Context, j *joined, token string) error {
	secrets := e.host.Kubernetes().CoreV1().Secrets(ClusterSecretNamespace)
	s, err := secrets.Get(ctx, j.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Data[SecretTokenKey] = []byte(token)
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

// unjoin removes the scenario's Cluster and Secret. The Cluster's finalizer
// is dropped rather than honoured: the cluster controller that would honour
// it has stopped with the scenario, and it would wait for the deletion of
// the karmada-es-<name> namespace, which never completes here because no
// namespace controller (kube-controller-manager) runs. That namespace is
// left behind; it holds nothing.
func (e *env) unjoin(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	clusters := e.host.Dynamic().Resource(ClusterGVR)
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := clusters.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing Cluster %s: dropping its finalizers: %v", name, err)
	}
	if err := clusters.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing Cluster %s: %v", name, err)
	}
	err := e.host.Kubernetes().CoreV1().Secrets(ClusterSecretNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing Secret %s/%s: %v", ClusterSecretNamespace, name, err)
	}
}

func ensureNamespace(ctx context.Context, c kubernetes.Interface, name string) error {
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
