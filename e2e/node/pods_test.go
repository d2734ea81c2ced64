//go:build e2e

package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/holdfast-dist/holdfast/internal/harness/node"
)

// bound is how long something that normally takes seconds may take before
// it counts as hung: two cores are shared with builds and other suites.
const bound = 3 * time.Minute

func goBuild(root, out, pkg string) error {
	return node.BuildPrograms(context.Background(), root, out, pkg)
}

// probePod is a pod of the probe image in its own namespace.
func probePod(t *testing.T, n *node.Node, name string, restart corev1.RestartPolicy, args ...string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := n.Kubernetes().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			// The ServiceAccount token is not needed; leaving it out keeps
			// the scenario independent of kube-controller-manager's SA.
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "probe", Image: probeImage, ImagePullPolicy: corev1.PullNever, Args: args,
			}},
		},
	}
	if args[0] == "serve" {
		pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1,
		}
	}
	created, err := n.Kubernetes().CoreV1().Pods(name).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	return created
}

// waitPod polls the pod until cond holds, returning the pod then.
func waitPod(ctx context.Context, n *node.Node, ns, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last *corev1.Pod
	for {
		p, err := n.Kubernetes().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = p
			if cond(p) {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("pod %s/%s: %w; last status: %s", ns, name, ctx.Err(), podSummary(last))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func podSummary(p *corev1.Pod) string {
	if p == nil {
		return "none"
	}
	s := string(p.Status.Phase)
	for _, c := range p.Status.Conditions {
		s += fmt.Sprintf(" %s=%s", c.Type, c.Status)
	}
	for _, c := range p.Status.ContainerStatuses {
		s += fmt.Sprintf(" %s(restarts %d, ready %v, state %+v)", c.Name, c.RestartCount, c.Ready, c.State)
	}
	return s
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func testPodReady(t *testing.T, n *node.Node) {
	sc := beginScenario(t, suiteNode, "a pod runs and is Ready", "")
	begin := time.Now()
	probePod(t, n, "pod-ready", corev1.RestartPolicyAlways, "serve", ":8080")
	p, err := waitPod(t.Context(), n, "pod-ready", "pod-ready", podReady)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	sc.Timing("create-to-ready", time.Since(begin))
	if p.Status.PodIP == "" || !strings.HasPrefix(p.Status.PodIP, strings.TrimSuffix(n.PodCIDR(), "0/25")) {
		sc.Errorf("pod IP %q is not from the node's pod range %s", p.Status.PodIP, n.PodCIDR())
	}
	sc.PassWithTest()
}

func testKubeletRestart(t *testing.T, n *node.Node) {
	sc := beginScenario(t, suiteNode, "a container that exits is restarted by the kubelet", "the container exits with code 3 two seconds after each start")
	begin := time.Now()
	probePod(t, n, "kubelet-restart", corev1.RestartPolicyAlways, "exit", "3", "2s")
	p, err := waitPod(t.Context(), n, "kubelet-restart", "kubelet-restart", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	if err != nil {
		sc.Fatalf("%v", err)
	}
	sc.Timing("create-to-first-restart", time.Since(begin))
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 3 {
		sc.Errorf("the restarted container's last state is %+v, want terminated with exit code 3", p.Status.ContainerStatuses[0].LastTerminationState)
	}
	sc.PassWithTest()
}

func testUnreachable(t *testing.T, n *node.Node) {
	// TEST-NET-3 (RFC 5737) and the usual Service range: neither is
	// routed in the node's namespace, so the node answers "unreachable" at
	// once; a timeout would mean the packet went somewhere.
	targets := []string{"203.0.113.1:443", "10.96.0.1:443"}
	sc := beginScenario(t, suiteNode, "a pod's connection out of the node's namespace fails at once (unreachable)",
		"the pod dials "+strings.Join(targets, " and ")+"; the probe classifies the error by errno")
	probePod(t, n, "unreachable", corev1.RestartPolicyNever, append([]string{"dial"}, targets...)...)
	ctx := t.Context()
	var log string
	deadline := time.Now().Add(bound)
	for {
		if _, err := waitPod(ctx, n, "unreachable", "unreachable", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }); err != nil {
			sc.Fatalf("%v", err)
		}
		raw, err := n.Kubernetes().CoreV1().Pods("unreachable").GetLogs("unreachable", &corev1.PodLogOptions{}).DoRaw(ctx)
		log = string(raw)
		if err == nil && strings.Count("\n"+log, "\ndial ") >= len(targets) {
			break
		}
		if time.Now().After(deadline) {
			sc.Fatalf("the probe's log has no line per target after %s (err %v): %q", bound, err, log)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, target := range targets {
		want := "dial " + target + ": unreachable "
		if !strings.Contains(log, want) {
			sc.Errorf("dialling %s from a pod: want %q in its log, got %q", target, want, log)
		}
	}
	sc.PassWithTest()
}
