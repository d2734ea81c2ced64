package estimator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CreateReadyNode creates Node name on a cluster without kubelets, as the
// estimator counts a real one: allocatable cpu (memory 16Gi, pods 110),
// Ready, written through the status subresource as a kubelet writes it, and
// without the node.kubernetes.io/not-ready:NoSchedule taint the
// TaintNodesByCondition admission plugin gives every new Node, which the
// node lifecycle controller lifts once it is Ready. With the taint the
// estimator rightly counts no room on the Node.
func CreateReadyNode(ctx context.Context, kube kubernetes.Interface, name, cpu string) error {
	nodes := kube.CoreV1().Nodes()
	created, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating Node %s: %w", name, err)
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	created.Status.Capacity, created.Status.Allocatable = alloc, alloc
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
	updated, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("writing Node %s's status: %w", name, err)
	}
	updated.Spec.Taints = slices.DeleteFunc(updated.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	if _, err := nodes.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("lifting Node %s's %s taint: %w", name, corev1.TaintNodeNotReady, err)
	}
	return nil
}
