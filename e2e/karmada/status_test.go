package karmada

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadClusterStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    ClusterStatus
		wantErr string
	}{
		{
			name: "ready with nodes",
			status: `{"conditions":[{"type":"CompleteAPIEnablements","status":"True"},
				{"type":"Ready","status":"True","reason":"ClusterReady","lastTransitionTime":"2026-12-02T12:00:00Z"}],
				"nodeSummary":{"totalNum":2,"readyNum":1}}`,
			want: ClusterStatus{Ready: true, ReadyReason: "ClusterReady", ReadySince: "2026-12-02T12:00:00Z", Nodes: 2, HasNodeSummary: true},
		},
		{
			name:   "not ready, summary with no nodes (totalNum omitted)",
			status: `{"conditions":[{"type":"Ready","status":"False","reason":"ClusterNotReachable"}],"nodeSummary":{}}`,
			want:   ClusterStatus{ReadyReason: "ClusterNotReachable", HasNodeSummary: true},
		},
		{name: "nothing collected yet", status: `{}`, want: ClusterStatus{}},
		{name: "bad totalNum", status: `{"nodeSummary":{"totalNum":"two"}}`, wantErr: "totalNum is string"},
		{name: "bad conditions", status: `{"conditions":"Ready"}`, wantErr: "status.conditions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status map[string]any
			if err := json.Unmarshal([]byte(tt.status), &status); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "member1"}, "status": status}}
			got, err := ReadClusterStatus(u)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "member1") {
					t.Fatalf("ReadClusterStatus() error = %v, want one naming the cluster and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ReadClusterStatus() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
