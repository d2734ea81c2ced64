package karmadacp

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// TestPolicySelectsItsDeployments: the policy's label selector matches the
// Deployments created for it, those created later included, and no other.
func TestPolicySelectsItsDeployments(t *testing.T) {
	pp := PropagationPolicy("default", "propagation", "member1")
	sel, _, _ := unstructured.NestedSlice(pp.Object, "spec", "resourceSelectors")
	if len(sel) != 1 {
		t.Fatalf("%d resource selectors, want 1", len(sel))
	}
	s := sel[0].(map[string]any)
	if s["apiVersion"] != "apps/v1" || s["kind"] != "Deployment" {
		t.Errorf("selector %v does not select Deployments", s)
	}
	match, _, _ := unstructured.NestedStringMap(s, "labelSelector", "matchLabels")
	selector := labels.SelectorFromSet(match)
	if !selector.Matches(labels.Set(Deployment("default", "web-2", "propagation", 1).Labels)) {
		t.Error("the policy does not select a Deployment created for it")
	}
	if selector.Matches(labels.Set(Deployment("default", "other", "another-policy", 1).Labels)) {
		t.Error("the policy selects another policy's Deployment")
	}
	clusters, _, _ := unstructured.NestedStringSlice(pp.Object, "spec", "placement", "clusterAffinity", "clusterNames")
	if len(clusters) != 1 || clusters[0] != "member1" {
		t.Errorf("placement %v, want member1", clusters)
	}
}

func TestDeploymentIsValidShape(t *testing.T) {
	d := Deployment("default", "web", "propagation", 3)
	if ptr.Deref(d.Spec.Replicas, 0) != 3 {
		t.Errorf("replicas %v", d.Spec.Replicas)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Error("the selector does not match the pod template (the API server would reject it)")
	}
}

func TestReadyStatusAndAggregated(t *testing.T) {
	member := Deployment("default", "web", "propagation", 2)
	member.Generation = 4
	st := ReadyStatus(member)
	if st.ObservedGeneration != 4 || st.ReadyReplicas != 2 || st.AvailableReplicas != 2 || st.UpdatedReplicas != 2 {
		t.Errorf("ReadyStatus = %+v", st)
	}

	karmada := Deployment("default", "web", "propagation", 2)
	karmada.Generation = 3
	for name, tc := range map[string]struct {
		status appsv1.DeploymentStatus
		want   bool
	}{
		"aggregated":               {appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 2, AvailableReplicas: 2}, true},
		"nothing yet":              {appsv1.DeploymentStatus{}, false},
		"an older generation":      {appsv1.DeploymentStatus{ObservedGeneration: 2, ReadyReplicas: 2, AvailableReplicas: 2}, false},
		"ready but not available":  {appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 2, AvailableReplicas: 1}, false},
		"more than the member has": {appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 4, AvailableReplicas: 4}, false},
	} {
		karmada.Status = tc.status
		if got, desc := Aggregated(karmada, 2); got != tc.want {
			t.Errorf("%s: Aggregated = %v (%s), want %v", name, got, desc, tc.want)
		}
	}
}

func work(name string, applied string, manifests ...map[string]any) unstructured.Unstructured {
	ms := make([]any, len(manifests))
	for i, m := range manifests {
		ms[i] = m
	}
	w := unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"workload": map[string]any{"manifests": ms}},
	}}
	if applied != "" {
		w.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Applied", "status": applied}}}
	}
	return w
}

func manifest(kind, ns, name string) map[string]any {
	return map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"namespace": ns, "name": name}}
}

func TestWorkFor(t *testing.T) {
	works := []unstructured.Unstructured{
		work("other", "True", manifest("Deployment", "default", "other")),
		work("web-1234", "True", manifest("Deployment", "default", "web")),
		work("web-2-5678", "False", manifest("Deployment", "default", "web-2")),
		work("svc", "True", manifest("Service", "default", "web-3")),
	}
	for _, tc := range []struct {
		name, wantWork string
		wantApplied    bool
	}{
		{"web", "web-1234", true},
		{"web-2", "web-2-5678", false},
		{"web-3", "", false}, // a Service of that name is not the Deployment
		{"absent", "", false},
	} {
		w, applied, err := WorkFor(works, "Deployment", "default", tc.name)
		if err != nil || w != tc.wantWork || applied != tc.wantApplied {
			t.Errorf("%s: got %q applied=%v err=%v, want %q applied=%v", tc.name, w, applied, err, tc.wantWork, tc.wantApplied)
		}
	}
	bad := []unstructured.Unstructured{{Object: map[string]any{
		"metadata": map[string]any{"name": "bad"},
		"spec":     map[string]any{"workload": map[string]any{"manifests": []any{"not an object"}}},
	}}}
	if _, _, err := WorkFor(bad, "Deployment", "default", "web"); err == nil {
		t.Error("a manifest that is not an object passed")
	}
}
