//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// What the rotation scenarios (rotation, repeated-rotation,
// repeated-restart) observe: member1's Cluster status as the cluster status
// controller writes it and karmada-aggregated-apiserver serves it. Ready is
// the short-lived path (health checks through a client built afresh from
// the Secret each sync), status.nodeSummary the long-lived one (the
// member's node informer, started once per cluster).
const (
	// clusterPoll is how often a scenario reads the Cluster: a quarter of
	// the status period, so an observation is timed to within half a
	// second without loading karmada-apiserver and the aggregated server.
	clusterPoll = 500 * time.Millisecond
	// clusterFailureThreshold is karmada-controller-manager's
	// --cluster-failure-threshold default (30s), which the harness keeps:
	// health checks must fail that long before Ready turns False.
	clusterFailureThreshold = 30 * time.Second
	// recoverTimeout bounds a recovery after the member's restart: the node
	// reflector backed off while the member was down, by at most
	// client-go's cap ([30s, 60s) with jitter), then one status period;
	// the rest is margin for a busy runner. Measured recovery is reported
	// and is far below this.
	recoverTimeout = 2 * time.Minute
)

// nodeStandIn is stated in the rotation scenarios' notes.
const nodeStandIn = "stand-in: member Nodes are objects the suite creates (no kubelet registers any); the cluster status controller counts them in status.nodeSummary as it would registered ones"

// clusterStatus reads member1's Cluster status through karmada-apiserver
// (served by karmada-aggregated-apiserver).
func (e *env) clusterStatus(ctx context.Context) (karmada.ClusterStatus, error) {
	u, err := e.cp.API.Dynamic().Resource(karmadacp.ClusterGVR).Get(ctx, memberName, metav1.GetOptions{})
	if err != nil {
		return karmada.ClusterStatus{}, err
	}
	return karmada.ReadClusterStatus(u)
}

// createNode creates Node name on the member and returns how many the
// member has now: the nodeSummary.totalNum a Cluster with a working node
// informer reports from then on.
func (e *env) createNode(ctx context.Context, name string) (int64, error) {
	nodes := e.member.Kubernetes().CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("creating Node %s on %s: %w", name, memberName, err)
	}
	list, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing the Nodes of %s: %w", memberName, err)
	}
	return int64(len(list.Items)), nil
}

// waitCollected waits until the Cluster is Ready and reports nodes nodes,
// and returns its status then.
func (e *env) waitCollected(ctx context.Context, nodes int64, timeout time.Duration) (karmada.ClusterStatus, error) {
	var last karmada.ClusterStatus
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, clusterPoll, timeout, true, func(ctx context.Context) (bool, error) {
		last, lastErr = e.clusterStatus(ctx)
		return lastErr == nil && last.Ready && last.HasNodeSummary && last.Nodes == nodes, nil
	})
	if err != nil {
		if lastErr != nil {
			return last, fmt.Errorf("cluster %s not Ready with %d nodes within %s: %w (last read: %v)", memberName, nodes, timeout, err, lastErr)
		}
		return last, fmt.Errorf("cluster %s not Ready with %d nodes within %s: %w (last: %s)", memberName, nodes, timeout, err, last)
	}
	return last, nil
}

// holdReady checks, until the moment until, that the Cluster stays Ready
// with the Ready condition of baseline (same transition time: it never
// flipped). Health checks have to fail for clusterFailureThreshold before
// Ready flips, so a Cluster still Ready clusterFailureThreshold plus two
// status periods after the member went down has passed a health check
// since it came back. It is for a Cluster whose status does not otherwise
// change; a new node count is quicker proof (see rotationPatched).
func (e *env) holdReady(ctx context.Context, baseline karmada.ClusterStatus, until time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	for {
		s, err := e.clusterStatus(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("reading cluster %s: %w", memberName, err)
		case !s.Ready || s.ReadySince != baseline.ReadySince:
			return fmt.Errorf("cluster %s did not stay Ready: %s (baseline %s)", memberName, s, baseline)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(clusterPoll):
		}
	}
}

// baseline checks that the member is observed through both paths before
// anything is rotated: the Cluster is Ready and a Node created now shows
// up in its nodeSummary.
func (e *env) baseline(ctx context.Context) (karmada.ClusterStatus, error) {
	want, err := e.createNode(ctx, "before")
	if err != nil {
		return karmada.ClusterStatus{}, err
	}
	return e.waitCollected(ctx, want, readyTimeout)
}

// memberRestart is one kill and restart of the member's kube-apiserver
// followed by a new Node: what the long-lived path is measured against.
type memberRestart struct {
	// killed is when kube-apiserver was SIGKILLed, restarted when it
	// served again (/readyz).
	killed, restarted time.Time
	// nodes is how many Nodes the member has with the new one: the
	// nodeSummary.totalNum of a Cluster whose node informer works.
	nodes int64
}

// restartMemberAndCreateNode SIGKILLs and restarts the member, so that
// every member watch has to reconnect, then creates Node node. Callers
// take their log marks before: kube-apiserver authenticates, and refuses,
// requests before its /readyz passes, so what the restart sets off may be
// logged while Restart still waits.
func (e *env) restartMemberAndCreateNode(ctx context.Context, node string) (memberRestart, error) {
	r := memberRestart{killed: time.Now()}
	if err := e.member.Restart(ctx); err != nil {
		return r, fmt.Errorf("restarting %s: %w", memberName, err)
	}
	r.restarted = time.Now()
	n, err := e.createNode(ctx, node)
	if err != nil {
		return r, err
	}
	r.nodes = n
	return r, nil
}

// joinMember joins the member as member1 and waits until its Cluster is
// Ready, returning how long that took.
func (e *env) joinMember(ctx context.Context) (*karmadacp.Member, time.Duration, error) {
	m, err := e.cp.JoinPush(ctx, memberName, e.member)
	if err != nil {
		return nil, 0, err
	}
	joined := time.Now()
	if err := m.WaitReady(ctx, readyTimeout); err != nil {
		return nil, 0, err
	}
	return m, time.Since(joined), nil
}

// joinMember1 is joinMember for a scenario: a failure ends it, and the
// time from the join to Ready is recorded as join-to-ready.
func (e *env) joinMember1(ctx context.Context, s *e2ereport.Run) *karmadacp.Member {
	m, took, err := e.joinMember(ctx)
	if err != nil {
		s.Fatalf("%v", err)
	}
	s.Timing("join-to-ready", took)
	return m
}
