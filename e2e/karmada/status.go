package karmada

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ClusterStatus is what the rotation scenarios read from a Cluster's status: the Ready
// condition (the short-lived path: health checks through fresh clients) and
// the node count (the long-lived path: the member's node informer).
type ClusterStatus struct {
	Ready bool
	// ReadyReason and ReadySince (lastTransitionTime, RFC 3339) tell
	// whether Ready changed between two observations: the condition keeps
	// its transition time while its status stays the same.
	ReadyReason, ReadySince string
	// Nodes is status.nodeSummary.totalNum; HasNodeSummary is false until
	// the controller collected one.
	Nodes          int64
	HasNodeSummary bool
}

// ReadClusterStatus reads ClusterStatus from a Cluster object.
func ReadClusterStatus(u *unstructured.Unstructured) (ClusterStatus, error) {
	var s ClusterStatus
	conditions, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return s, fmt.Errorf("cluster %s: status.conditions: %w", u.GetName(), err)
	}
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || cond["type"] != "Ready" {
			continue
		}
		s.Ready = cond["status"] == "True"
		s.ReadyReason, _ = cond["reason"].(string)
		s.ReadySince, _ = cond["lastTransitionTime"].(string)
	}
	summary, found, err := unstructured.NestedMap(u.Object, "status", "nodeSummary")
	if err != nil {
		return s, fmt.Errorf("cluster %s: status.nodeSummary: %w", u.GetName(), err)
	}
	if !found {
		return s, nil
	}
	s.HasNodeSummary = true
	// totalNum is omitempty: absent means no nodes. JSON numbers decode as
	// int64 through the dynamic client and as float64 through encoding/json.
	switch n := summary["totalNum"].(type) {
	case nil:
	case int64:
		s.Nodes = n
	case float64:
		s.Nodes = int64(n)
	default:
		return s, fmt.Errorf("cluster %s: status.nodeSummary.totalNum is %T, want a number", u.GetName(), n)
	}
	return s, nil
}

func (s ClusterStatus) String() string {
	nodes := "no nodeSummary"
	if s.HasNodeSummary {
		nodes = fmt.Sprintf("nodeSummary.totalNum=%d", s.Nodes)
	}
	return fmt.Sprintf("Ready=%t (%s since %s), %s", s.Ready, s.ReadyReason, s.ReadySince, nodes)
}
