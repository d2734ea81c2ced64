package karmadacp

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Karmada's resources the scenarios create and read.
var (
	PropagationPolicyGVR = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
	WorkGVR              = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha1", Resource: "works"}
)

// workloadLabel marks the Deployments a scenario's PropagationPolicy
// selects: one policy places every Deployment created with it, including
// those created after the policy, as an operator's label-selecting policy
// would.
const workloadLabel = "e2e.holdfast.dev/propagate"

// pauseImage is never pulled (no kubelet anywhere); it only has to be a
// valid image reference.
const pauseImage = "registry.k8s.io/pause:3.10"

// Deployment is a workload for Karmada: labelled for the scenario's policy
// (value policy), replicas pods of pauseImage.
func Deployment(namespace, name, policy string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{workloadLabel: policy}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: pauseImage}}},
			},
		},
	}
}

// PropagationPolicy places every Deployment in namespace labelled
// workloadLabel=name on clusters (Duplicated: each cluster gets the full
// replica count, Karmada's default without a replica scheduling strategy).
func PropagationPolicy(namespace, name string, clusters ...string) *unstructured.Unstructured {
	names := make([]any, len(clusters))
	for i, c := range clusters {
		names[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PropagationPolicyGVR.GroupVersion().String(),
		"kind":       "PropagationPolicy",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{
				"apiVersion":    "apps/v1",
				"kind":          "Deployment",
				"labelSelector": map[string]any{"matchLabels": map[string]any{workloadLabel: name}},
			}},
			"placement": map[string]any{
				"clusterAffinity": map[string]any{"clusterNames": names},
			},
		},
	}}
}

// ReadyStatus is the status a member's kube-controller-manager and kubelets
// would write for a Deployment whose replicas all run: the stand-in for
// workload status on members with no kubelet.
func ReadyStatus(d *appsv1.Deployment) appsv1.DeploymentStatus {
	n := ptr.Deref(d.Spec.Replicas, 1)
	return appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           n,
		UpdatedReplicas:    n,
		ReadyReplicas:      n,
		AvailableReplicas:  n,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: "MinimumReplicasAvailable", Message: "stand-in: written by the holdfast e2e suite (no kubelet)",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
}

// Aggregated reports whether Karmada's Deployment d shows the status its
// members reported: ready and available replicas as wanted, and
// observedGeneration at d's generation, which Karmada sets only once every
// member's status is of the latest template (aggregateDeploymentStatus).
func Aggregated(d *appsv1.Deployment, ready int32) (bool, string) {
	s := d.Status
	desc := fmt.Sprintf("generation %d, status: observedGeneration %d, replicas %d, ready %d, available %d", d.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.AvailableReplicas)
	return s.ReadyReplicas == ready && s.AvailableReplicas == ready && s.ObservedGeneration == d.Generation, desc
}

// WorkFor finds, among Works (of a karmada-es-<cluster> namespace), the one
// whose manifest is the object kind namespace/name, and whether it is
// Applied. A Work holds one manifest per resource template.
func WorkFor(works []unstructured.Unstructured, kind, namespace, name string) (work string, applied bool, err error) {
	for _, w := range works {
		manifests, _, _ := unstructured.NestedSlice(w.Object, "spec", "workload", "manifests")
		for _, raw := range manifests {
			m, ok := raw.(map[string]any)
			if !ok {
				return "", false, fmt.Errorf("work %s: a manifest is %T, not an object", w.GetName(), raw)
			}
			o := unstructured.Unstructured{Object: m}
			if o.GetKind() != kind || o.GetNamespace() != namespace || o.GetName() != name {
				continue
			}
			return w.GetName(), conditionTrue(w, "Applied"), nil
		}
	}
	return "", false, nil
}

func conditionTrue(o unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, raw := range conds {
		c, _ := raw.(map[string]any)
		if c["type"] == typ {
			return c["status"] == "True"
		}
	}
	return false
}
