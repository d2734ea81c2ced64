package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// podsGoneTimeout bounds the wait for kubelet to stop every pod after they
// were deleted: a container gets a one-second grace period, and kubelet
// syncs a deleted pod within seconds.
const podsGoneTimeout = 90 * time.Second

// Stop deletes every pod and waits for kubelet to stop them, then stops the
// node and its control plane and removes everything the run created: the
// iptables chains (kube-proxy --cleanup, then the namespace), the pods'
// network namespaces and CNI state (with the mount namespace), the bridge
// and veth pair (with the network namespace), the run's cgroup tree,
// leftover shims, and the run folder. It is safe to call twice.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	begin := time.Now()
	var errs []error
	ctx := context.Background()

	// No controller may recreate what is being deleted.
	stopProc(n.kcm)
	stopProc(n.scheduler)
	if n.kubelet != nil && !n.kubelet.Exited() && n.cluster != nil {
		if err := n.deletePods(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	stopProc(n.kubeProxy)
	if n.holder != nil && !n.holder.Exited() {
		if out, err := n.InNode(ctx, n.bins.kubeProxy, "--cleanup"); err != nil {
			errs = append(errs, fmt.Errorf("node %s: kube-proxy --cleanup: %w: %s", n.opts.Name, err, out))
		}
	}
	stopProc(n.kubelet)
	stopProc(n.containerd)
	if n.layout != "" {
		// The shims (their command lines name the run's socket) and
		// anything else of this run but the holder, whose namespaces the
		// clean-up below still enters.
		keep := -1
		if n.holder != nil {
			keep = n.holder.Pid()
		}
		killMarked(string(n.layout), keep)
	}
	stopProc(n.holder)
	if n.cluster != nil {
		if err := n.cluster.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.layout != "" {
		s, err := readState()
		if err != nil {
			errs = append(errs, err)
		}
		if s == nil || s.RunDir != string(n.layout) {
			s = &state{RunDir: string(n.layout), NetNS: n.net.netns(), HostVeth: n.net.hostVeth(), CgroupRoot: n.cgroup}
		}
		if err := clearRun(*s); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.opts.Name, err))
		}
	}
	if n.unlock != nil {
		n.unlock()
	}
	n.timings.Stop = time.Since(begin)
	return errors.Join(errs...)
}

func stopProc(p *controlplane.Process) {
	if p != nil {
		_ = p.Stop(10 * time.Second)
	}
}

// deletePods deletes every pod with a short grace period and waits until
// kubelet has stopped them all: a pod removed from the API while its
// containers run would leave them to the clean-up's SIGKILL.
func (n *Node) deletePods(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, podsGoneTimeout)
	defer cancel()
	pods := n.cluster.Kubernetes().CoreV1().Pods(metav1.NamespaceAll)
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("node %s: listing pods: %w", n.opts.Name, err)
	}
	grace := int64(1)
	for _, p := range list.Items {
		_ = n.cluster.Kubernetes().CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}
	for {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			left := 0
			if list != nil {
				left = len(list.Items)
			}
			return fmt.Errorf("node %s: %d pods still there %s after their deletion", n.opts.Name, left, podsGoneTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// CopyLogs copies the node's process logs and its control plane's into
// dst, for a failed test's artifacts. Call it before Stop.
func (n *Node) CopyLogs(dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, dir := range []string{n.layout.logs(), n.cluster.LogDir()} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil {
				err = os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
