package scale

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// auditLine is one JSON line as kube-apiserver writes it at Metadata level.
func auditLine(t *testing.T, id, stage, verb, agent, user, resource, ns, name string, code int, at time.Time) string {
	t.Helper()
	e := map[string]any{
		"auditID": id, "stage": stage, "verb": verb, "userAgent": agent,
		"user":                     map[string]any{"username": user},
		"responseStatus":           map[string]any{"code": code},
		"requestReceivedTimestamp": at.Format(time.RFC3339Nano),
	}
	if resource != "" {
		e["objectRef"] = map[string]any{"resource": resource, "namespace": ns, "name": name}
	}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(data) + "\n"
}

func readEvents(t *testing.T, lines ...string) []controlplane.AuditEvent {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	var data string
	for _, l := range lines {
		data += l
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := controlplane.ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestCountRequests(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	cm := "karmada-controller-manager/v1.18.2 (linux/amd64) kubernetes/abc"
	harness := "scale.test/v0.0.0 (linux/amd64) kubernetes/$Format"
	sa := "system:serviceaccount:karmada-cluster:karmada-member-001"
	events := readEvents(t,
		// A watch logs twice under one audit ID: counted once.
		auditLine(t, "w1", "ResponseStarted", "watch", cm, sa, "pods", "", "", 200, base.Add(time.Second)),
		auditLine(t, "w1", "ResponseComplete", "watch", cm, sa, "pods", "", "", 200, base.Add(time.Second)),
		auditLine(t, "l1", "ResponseComplete", "list", cm, sa, "nodes", "", "", 200, base.Add(2*time.Second)),
		auditLine(t, "l2", "ResponseComplete", "list", cm, "", "nodes", "", "", 401, base.Add(3*time.Second)),
		auditLine(t, "g1", "ResponseComplete", "get", "karmada-search", sa, "deployments", "scale-001", "web", 200, base.Add(4*time.Second)),
		// The harness and the server's own loopback client are excluded.
		auditLine(t, "h1", "ResponseComplete", "list", harness, "admin", "deployments", "", "", 200, base.Add(2*time.Second)),
		auditLine(t, "k1", "ResponseComplete", "get", "kube-apiserver/v1.35.3 (linux/amd64)", "system:apiserver", "namespaces", "", "default", 200, base.Add(2*time.Second)),
		// Outside the window.
		auditLine(t, "o1", "ResponseComplete", "list", cm, sa, "nodes", "", "", 200, base.Add(-time.Second)),
		auditLine(t, "o2", "ResponseComplete", "list", cm, sa, "nodes", "", "", 200, base.Add(11*time.Second)),
	)
	r := CountRequests(events, base, base.Add(10*time.Second), "scale.test", "kube-apiserver")
	if r.Total != 4 || r.Lists != 2 || r.Unauthorized != 1 {
		t.Errorf("CountRequests: total %d, lists %d, 401s %d; want 4, 2, 1 (%+v)", r.Total, r.Lists, r.Unauthorized, r)
	}
	if r.ByVerb["watch"] != 1 || r.ByVerb["list"] != 2 || r.ByVerb["get"] != 1 {
		t.Errorf("by verb %v", r.ByVerb)
	}
	if r.ByAgent["karmada-controller-manager"] != 3 || r.ByAgent["karmada-search"] != 1 {
		t.Errorf("by agent %v", r.ByAgent)
	}
	if r.ByCall["karmada-controller-manager list nodes"] != 2 {
		t.Errorf("by call %v", r.ByCall)
	}
	sum := r.Add(r)
	if sum.Total != 8 || sum.Lists != 4 || sum.ByVerb["list"] != 4 || sum.ByAgent["karmada-search"] != 2 || r.Total != 4 {
		t.Errorf("Add: %+v (and the operand must not change: %+v)", sum, r)
	}
	if z := (Requests{}).Add(r); z.Total != 4 || z.ByVerb["list"] != 2 {
		t.Errorf("zero Add: %+v", z)
	}
}

func TestAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"karmada-controller-manager/v1.18.2 (linux/amd64) kubernetes/abc": "karmada-controller-manager",
		"karmada-search":       "karmada-search",
		"Go-http-client/2.0":   "Go-http-client",
		"":                     "(none)",
		"kube-apiserver/v1.35": "kube-apiserver",
	} {
		if got := Agent(ua); got != want {
			t.Errorf("Agent(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestSecretReads(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	cm := "system:serviceaccount:karmada-system:karmada-controller-manager"
	events := readEvents(t,
		auditLine(t, "1", "ResponseComplete", "get", "x", cm, "secrets", "karmada-cluster", "member-001", 200, base),
		auditLine(t, "2", "ResponseComplete", "get", "x", cm, "secrets", "karmada-cluster", "member-001", 200, base),
		auditLine(t, "3", "ResponseComplete", "list", "x", cm, "secrets", "karmada-cluster", "", 200, base),
		auditLine(t, "4", "ResponseComplete", "update", "x", cm, "secrets", "karmada-cluster", "member-002", 200, base),
		auditLine(t, "5", "ResponseComplete", "get", "x", "admin", "secrets", "karmada-cluster", "member-002", 200, base),
		auditLine(t, "6", "ResponseComplete", "get", "x", cm, "secrets", "default", "member-002", 200, base),
		auditLine(t, "7", "ResponseComplete", "get", "x", cm, "configmaps", "karmada-cluster", "member-002", 200, base),
	)
	got := SecretReads(events, cm, "karmada-cluster", base, base.Add(time.Second))
	if len(got) != 2 || got["member-001"] != 2 || got[""] != 1 {
		t.Errorf("SecretReads = %v, want member-001: 2 and one list", got)
	}
}
