package karmada

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Names Karmada uses for a Push member, as `karmadactl join` writes them.
const (
	// ClusterSecretNamespace holds the member credential Secrets on the
	// Karmada host (upstream's karmada-cluster).
	ClusterSecretNamespace = "karmada-cluster"
	// SecretTokenKey and SecretCADataKey are
	// clusterv1alpha1.SecretTokenKey and SecretCADataKey.
	SecretTokenKey  = "token"
	SecretCADataKey = "caBundle"
)

// ClusterGVR is cluster.karmada.io/v1alpha1 clusters.
var ClusterGVR = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}

// PushMember is a member cluster joined in Push mode: a Cluster object on
// the Karmada host pointing at the member's API server, and a Secret beside
// it holding the credential the controller-manager uses for the member.
type PushMember struct {
	// Name is the Cluster's name, also the Secret's.
	Name string
	// Endpoint is the member API server, e.g. "https://127.0.0.1:6443".
	Endpoint string
	// CAData is the PEM of the CA that signed the member's serving cert.
	CAData []byte
}

// Validate reports what is wrong with m before anything is created.
func (m PushMember) Validate() error {
	// The cluster controller creates namespace karmada-es-<name>.
	if errs := validation.IsDNS1123Label("karmada-es-" + m.Name); len(errs) > 0 {
		return fmt.Errorf("member cluster name %q: %v", m.Name, errs)
	}
	if m.Endpoint == "" {
		return fmt.Errorf("member cluster %s: empty API endpoint", m.Name)
	}
	if len(m.CAData) == 0 {
		return fmt.Errorf("member cluster %s: empty CA bundle", m.Name)
	}
	return nil
}

// Secret returns the member's credential Secret holding token.
func (m PushMember) Secret(token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ClusterSecretNamespace, Name: m.Name},
		Data: map[string][]byte{
			SecretTokenKey:  []byte(token),
			SecretCADataKey: m.CAData,
		},
	}
}

// Cluster returns the Cluster object, which the API serves from the
// stand-in CRD.
func (m PushMember) Cluster() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ClusterGVR.GroupVersion().String(),
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": m.Name},
		"spec": map[string]any{
			"apiEndpoint": m.Endpoint,
			"syncMode":    "Push",
			"secretRef": map[string]any{
				"namespace": ClusterSecretNamespace,
				"name":      m.Name,
			},
		},
	}}
}
