package worker

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadAuditLogAndSentBy(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	lines := `{"kind":"Event","stage":"ResponseComplete","verb":"get","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters/w","userAgent":"worker-operator/v0.0.0 (linux/amd64) kubernetes/$Format/hubfollow","user":{"username":"system:serviceaccount:p:w"},"responseStatus":{"code":200}}
{"kind":"Event","stage":"ResponseComplete","verb":"list","requestURI":"/api/v1/nodes","userAgent":"worker-operator/v0.0.0 (linux/amd64) kubernetes/$Format","user":{},"responseStatus":{"code":401}}
{"kind":"Event","stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces","userAgent":"worker.test/v0.0.0 (linux/amd64) kubernetes/$Format","user":{"username":"admin"},"responseStatus":{"code":200}}
{"kind":"Event","stage":"ResponseComplete","verb":"get","requestURI":"/x","userAgent":"worker-operatorX/1","user":{},"responseStatus":{"code":200}}
{"kind":"Event","stage":"Respo`
	if err := os.WriteFile(log, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := readAuditLog(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 {
		t.Fatalf("read %d events, want 4 (the torn last line skipped)", len(events))
	}
	got := sentBy(events, "worker-operator")
	if len(got) != 2 {
		t.Fatalf("sentBy found %d events, want the worker's authenticated and rejected requests", len(got))
	}
	if got[1].ResponseStatus.Code != 401 || got[0].User.Username != "system:serviceaccount:p:w" {
		t.Errorf("decoded %+v", got)
	}

	missing, err := readAuditLog(filepath.Join(dir, "none.log"))
	if err != nil || len(missing) != 0 {
		t.Errorf("a log not written yet = %v, %v; want empty, nil", missing, err)
	}
}

func TestAuditFlags(t *testing.T) {
	dir := t.TempDir()
	flags, logPath, err := auditFlags(dir)
	if err != nil {
		t.Fatal(err)
	}
	if logPath != filepath.Join(dir, "audit.log") || len(flags) != 3 {
		t.Errorf("auditFlags = %v, %s", flags, logPath)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "audit-policy.yaml")); err != nil || string(b) != auditPolicy {
		t.Errorf("policy file = %q, %v", b, err)
	}
}
