//go:build e2e

package karmada

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// pollInterval is how often a scenario reads the Cluster: a quarter of
	// the status period, so an observation is timed to within half a
	// second without loading the host.
	pollInterval = 500 * time.Millisecond
	// clusterFailureThreshold is karmada-controller-manager's
	// --cluster-failure-threshold default (30s), which the suite keeps:
	// health checks must fail that long before Ready turns False.
	clusterFailureThreshold = 30 * time.Second
	// collectTimeout bounds waiting for a Cluster to be Ready with a node
	// count: join, first health checks, informer sync, a status period.
	// Seconds idle; generous for a busy runner.
	collectTimeout = 2 * time.Minute
	// recoverTimeout bounds a patched binary's recovery after the member's
	// restart: the node reflector backed off while the member was down, by
	// at most client-go's cap ([30s, 60s) with jitter), then one status
	// period; the rest is margin for a busy runner. Measured recovery is
	// reported and is far below this.
	recoverTimeout = 2 * time.Minute
)

// clusterStatus reads Cluster name's status from the host.
func (e *env) clusterStatus(ctx context.Context, name string) (ClusterStatus, error) {
	u, err := e.host.Dynamic().Resource(ClusterGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ClusterStatus{}, err
	}
	return ReadClusterStatus(u)
}

// createNode creates a Node on the member and returns how many the member
// has now: the nodeSummary.totalNum a Cluster with a working node informer
// reports from then on. Scenarios share the member, so counts accumulate.
func (e *env) createNode(ctx context.Context, name string) (int64, error) {
	nodes := e.member.Kubernetes().CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("creating Node %s on the member: %w", name, err)
	}
	list, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing the member's Nodes: %w", err)
	}
	return int64(len(list.Items)), nil
}

// waitCollected waits until Cluster name is Ready and reports nodes nodes,
// and returns its status then.
func (e *env) waitCollected(ctx context.Context, name string, nodes int64, timeout time.Duration) (ClusterStatus, error) {
	var last ClusterStatus
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		last, lastErr = e.clusterStatus(ctx, name)
		return lastErr == nil && last.Ready && last.HasNodeSummary && last.Nodes == nodes, nil
	})
	if err != nil {
		if lastErr != nil {
			return last, fmt.Errorf("cluster %s not Ready with %d nodes within %s: %w (last read: %v)", name, nodes, timeout, err, lastErr)
		}
		return last, fmt.Errorf("cluster %s not Ready with %d nodes within %s: %w (last: %s)", name, nodes, timeout, err, last)
	}
	return last, nil
}

// holdReady checks, until the moment until, that Cluster name stays Ready
// with the Ready condition of baseline (same transition time: it never
// flipped). Ready is the short-lived path: health checks through a client
// built afresh from the Secret. Health checks have to fail for
// clusterFailureThreshold before Ready flips, so a Cluster still Ready
// clusterFailureThreshold plus two status periods after the member went
// down has passed a health check since it came back. It is for a Cluster
// whose status does not otherwise change; a new node count is quicker
// proof (see rotationPatched).
func (e *env) holdReady(ctx context.Context, name string, baseline ClusterStatus, until time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	for {
		s, err := e.clusterStatus(ctx, name)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("reading cluster %s: %w", name, err)
		case !s.Ready || s.ReadySince != baseline.ReadySince:
			return fmt.Errorf("cluster %s did not stay Ready: %s (baseline %s)", name, s, baseline)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pollInterval):
		}
	}
}

// baseline checks that the member is observed through both paths before
// anything is rotated: the Cluster is Ready and a Node created now shows up
// in its nodeSummary.
func (e *env) baseline(ctx context.Context, name string) (ClusterStatus, error) {
	want, err := e.createNode(ctx, name+"-before")
	if err != nil {
		return ClusterStatus{}, err
	}
	return e.waitCollected(ctx, name, want, collectTimeout)
}

// memberRestart is one kill and restart of the member's kube-apiserver
// followed by a new Node: what every scenario's long-lived path is
// measured against.
type memberRestart struct {
	// killed is when kube-apiserver was SIGKILLed, restarted when it
	// served again (/readyz).
	killed, restarted time.Time
	// nodes is how many Nodes the member has with the new one: the
	// nodeSummary.totalNum of a Cluster whose node informer works.
	nodes int64
}

// restartMemberAndCreateNode SIGKILLs and restarts the member, so that every
// watch of every controller-manager has to reconnect, then creates Node
// node. Callers take their log marks before: kube-apiserver authenticates,
// and refuses, requests before its /readyz passes, so what the restart sets
// off may be logged while Restart still waits.
func (e *env) restartMemberAndCreateNode(ctx context.Context, node string) (memberRestart, error) {
	r := memberRestart{killed: time.Now()}
	if err := e.member.Restart(ctx); err != nil {
		return r, fmt.Errorf("restarting the member: %w", err)
	}
	r.restarted = time.Now()
	n, err := e.createNode(ctx, node)
	if err != nil {
		return r, err
	}
	r.nodes = n
	return r, nil
}
