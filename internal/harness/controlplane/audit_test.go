package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub")
	logPath := filepath.Join(dir, "logs", "audit.log")
	flags, err := AuditFlags(dir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--audit-policy-file=" + filepath.Join(dir, AuditPolicyFile), "--audit-log-path=" + logPath, "--audit-log-format=json"}
	if strings.Join(flags, " ") != strings.Join(want, " ") {
		t.Errorf("AuditFlags = %v, want %v", flags, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, AuditPolicyFile)); err != nil || string(b) != AuditPolicy {
		t.Errorf("policy file = %q, %v", b, err)
	}
}

func TestReadAudit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	whole := `{"auditID":"1","stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/nodes","userAgent":"a/1","user":{"username":"u"},"objectRef":{"resource":"nodes"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:01.000000Z"}
{"auditID":"2","stage":"ResponseStarted","verb":"list","requestURI":"/api/v1/pods","user":{},"responseStatus":{"code":401}}
`
	torn := `{"auditID":"3","stage":"Respo`
	if err := os.WriteFile(path, []byte(whole+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("read %d events, want 2 (the line being written left for later)", len(events))
	}
	if e := events[0]; e.User.Username != "u" || e.ObjectRef == nil || e.ObjectRef.Resource != "nodes" || e.RequestReceived.Second() != 1 {
		t.Errorf("decoded %+v", e)
	}
	if events[1].ResponseStatus.Code != 401 || events[1].User.Username != "" {
		t.Errorf("decoded %+v", events[1])
	}

	if err := os.WriteFile(path, []byte(whole+"I1203 12:00:00 not an audit event\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAudit(path); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a klog line: error = %v, want one naming line 3", err)
	}
	if missing, err := ReadAudit(filepath.Join(dir, "none.log")); err != nil || len(missing) != 0 {
		t.Errorf("a log not written yet = %v, %v; want empty, nil", missing, err)
	}
}

// Past --audit-log-maxsize kube-apiserver's log backend renames the file
// and starts a new one: the older requests are in the renamed file.
func TestReadAuditRotated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	line := func(id string) string {
		return `{"auditID":"` + id + `","stage":"ResponseComplete","verb":"get","responseStatus":{"code":200}}` + "\n"
	}
	for name, data := range map[string]string{
		"audit-2026-12-04T12-00-00.000.log": line("2"),
		"audit-2026-12-04T11-00-00.000.log": line("1"),
		"audit.log":                         line("3"),
		AuditPolicyFile:                     AuditPolicy,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	events, err := ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range events {
		ids = append(ids, e.AuditID)
	}
	if strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("read %v, want the rotated files oldest first, then the log", ids)
	}
}
