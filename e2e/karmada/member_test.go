package karmada

import (
	"strings"
	"testing"
)

func TestPushMember(t *testing.T) {
	m := PushMember{Name: "member1", Endpoint: "https://127.0.0.1:6443", CAData: []byte("PEM")}
	if err := m.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}

	s := m.Secret("tok")
	if s.Namespace != "karmada-cluster" || s.Name != "member1" {
		t.Errorf("Secret is %s/%s, want karmada-cluster/member1", s.Namespace, s.Name)
	}
	if string(s.Data["token"]) != "tok" || string(s.Data["caBundle"]) != "PEM" {
		t.Errorf("Secret data keys = %v, want token and caBundle", keys(s.Data))
	}

	c := m.Cluster()
	if c.GetAPIVersion() != "cluster.karmada.io/v1alpha1" || c.GetKind() != "Cluster" || c.GetName() != "member1" {
		t.Errorf("Cluster is %s %s %s", c.GetAPIVersion(), c.GetKind(), c.GetName())
	}
	spec := c.Object["spec"].(map[string]any)
	if spec["syncMode"] != "Push" || spec["apiEndpoint"] != m.Endpoint {
		t.Errorf("Cluster spec = %v, want Push mode at %s", spec, m.Endpoint)
	}
	ref := spec["secretRef"].(map[string]any)
	if ref["namespace"] != s.Namespace || ref["name"] != s.Name {
		t.Errorf("Cluster secretRef = %v, want the Secret %s/%s", ref, s.Namespace, s.Name)
	}
}

func TestPushMemberValidate(t *testing.T) {
	tests := []struct {
		name    string
		m       PushMember
		wantErr string
	}{
		{name: "upper case name", m: PushMember{Name: "Member1", Endpoint: "https://x", CAData: []byte("x")}, wantErr: `member cluster name "Member1"`},
		{name: "name too long for its execution namespace", m: PushMember{Name: strings.Repeat("m", 60), Endpoint: "https://x", CAData: []byte("x")}, wantErr: "member cluster name"},
		{name: "no endpoint", m: PushMember{Name: "m", CAData: []byte("x")}, wantErr: "member cluster m: empty API endpoint"},
		{name: "no CA", m: PushMember{Name: "m", Endpoint: "https://x"}, wantErr: "member cluster m: empty CA bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
