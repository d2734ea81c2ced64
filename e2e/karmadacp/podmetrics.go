package karmadacp

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// QuerySourceAnnotation is the annotation karmada-metrics-adapter puts on
// every metric it serves, naming the member it came from
// (autoscalingv1alpha1.QuerySourceAnnotationKey).
const QuerySourceAnnotation = "resource.karmada.io/query-from-cluster"

// probeLabel marks the Pods the metrics scenario creates on the member.
const probeLabel = "e2e.holdfast.dev/metrics-probe"

// MemberPod is a Pod created on a member for its metrics: one container of
// pauseImage. It is never scheduled (no kubelet); the member's
// metrics.k8s.io stand-in reports usage for it because it exists.
func MemberPod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{probeLabel: "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: pauseImage}}},
	}
}

// ServedFrom checks that pm, read through Karmada's metrics.k8s.io, is the
// member stand-in's PodMetrics of Pod namespace/name relayed from cluster:
// karmada-metrics-adapter's source annotation, and the stand-in's usage
// for every container of MemberPod.
func ServedFrom(pm *metricsv1beta1.PodMetrics, namespace, name, cluster string) error {
	if pm.Namespace != namespace || pm.Name != name {
		return fmt.Errorf("PodMetrics %s/%s, want %s/%s", pm.Namespace, pm.Name, namespace, name)
	}
	if got := pm.Annotations[QuerySourceAnnotation]; got != cluster {
		return fmt.Errorf("PodMetrics %s/%s: %s=%q, want %q", namespace, name, QuerySourceAnnotation, got, cluster)
	}
	want := MemberPod(namespace, name).Spec.Containers
	if len(pm.Containers) != len(want) {
		return fmt.Errorf("PodMetrics %s/%s: %d containers, want %d", namespace, name, len(pm.Containers), len(want))
	}
	usage := karmadacp.StandInUsage()
	for i, c := range pm.Containers {
		if c.Name != want[i].Name || !c.Usage.Cpu().Equal(*usage.Cpu()) || !c.Usage.Memory().Equal(*usage.Memory()) {
			return fmt.Errorf("PodMetrics %s/%s: container %s uses cpu %s memory %s, want %s with the stand-in's cpu %s memory %s", namespace, name, c.Name, c.Usage.Cpu(), c.Usage.Memory(), want[i].Name, usage.Cpu(), usage.Memory())
		}
	}
	return nil
}
