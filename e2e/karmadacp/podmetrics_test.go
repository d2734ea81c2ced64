package karmadacp

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// TestServedFrom: only the stand-in's PodMetrics of the Pod asked for,
// relayed from the named member, pass.
func TestServedFrom(t *testing.T) {
	good := func() *metricsv1beta1.PodMetrics {
		return &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Annotations: map[string]string{QuerySourceAnnotation: "member1"}},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "pause", Usage: karmadacp.StandInUsage()}},
		}
	}
	if err := ServedFrom(good(), "default", "p", "member1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*metricsv1beta1.PodMetrics)
		want   string
	}{
		{"another Pod", func(pm *metricsv1beta1.PodMetrics) { pm.Name = "q" }, "want default/p"},
		{"another member", func(pm *metricsv1beta1.PodMetrics) { pm.Annotations[QuerySourceAnnotation] = "member2" }, `"member2"`},
		{"no source", func(pm *metricsv1beta1.PodMetrics) { pm.Annotations = nil }, `""`},
		{"no containers", func(pm *metricsv1beta1.PodMetrics) { pm.Containers = nil }, "0 containers"},
		{"other usage", func(pm *metricsv1beta1.PodMetrics) {
			pm.Containers[0].Usage = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("11Mi")}
		}, "uses cpu 1"},
	} {
		pm := good()
		tc.change(pm)
		if err := ServedFrom(pm, "default", "p", "member1"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %s", tc.name, err, tc.want)
		}
	}
	if MemberPod("default", "p").Labels[probeLabel] != "true" {
		t.Error("MemberPod is not labelled as a probe")
	}
}
