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

func TestRequestMultiset(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	lines := `{"auditID":"1","stage":"ResponseComplete","verb":"get","requestURI":"/apis?timeout=32s","userAgent":"worker-operator/v0"}
{"auditID":"2","stage":"ResponseComplete","verb":"list","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters?limit=500","objectRef":{"resource":"clusters","namespace":"p","apiGroup":"controller.kubeslice.io"}}
{"auditID":"3","stage":"ResponseStarted","verb":"watch","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters?watch=true","objectRef":{"resource":"clusters"}}
{"auditID":"4","stage":"ResponseComplete","verb":"update","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters/w/status","objectRef":{"resource":"clusters","subresource":"status","name":"w"}}
{"auditID":"3","stage":"ResponseComplete","verb":"watch","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters?watch=true","objectRef":{"resource":"clusters"}}
{"auditID":"5","stage":"ResponseComplete","verb":"update","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters/w/status","objectRef":{"resource":"clusters","subresource":"status","name":"w"}}
{"auditID":"7","stage":"ResponseComplete","verb":"update","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters/w/status","objectRef":{"resource":"clusters","subresource":"status","name":"w"},"responseStatus":{"code":409}}
{"auditID":"6","stage":"ResponseComplete","verb":"get","requestURI":"/apis/controller.kubeslice.io/v1alpha1/namespaces/p/clusters/w","objectRef":{"resource":"clusters","name":"w"}}
`
	if err := os.WriteFile(log, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := readAuditLog(log)
	if err != nil {
		t.Fatal(err)
	}
	kept, conflicts := withoutConflicts(events)
	if conflicts != 1 || len(kept) != len(events)-1 {
		t.Errorf("withoutConflicts dropped %d of %d events, counted %d conflicts; want the one 409", len(events)-len(kept), len(events), conflicts)
	}
	got := requestMultiset(kept)
	want := map[string]int{"get /apis": 1, "list clusters": 1, "watch clusters": 1, "update clusters/status": 2, "get clusters": 1}
	if d := multisetDiff(got, want); len(d) != 0 {
		t.Errorf("requestMultiset differs: %v (got %s)", d, formatMultiset(got))
	}
	pristine := map[string]int{"get /apis": 1, "list clusters": 1, "watch clusters": 1, "update clusters/status": 2}
	if d := multisetDiff(got, pristine); len(d) != 1 || d[0] != "get clusters: got 1, want 0" {
		t.Errorf("multisetDiff = %q", d)
	}
	if w := watchesOnce(map[string]int{"watch clusters": 3, "list clusters": 2}); w["watch clusters"] != 1 || w["list clusters"] != 2 {
		t.Errorf("watchesOnce = %v", w)
	}
	if f := formatMultiset(pristine); f != "get /apis x1, list clusters x1, update clusters/status x2, watch clusters x1" {
		t.Errorf("formatMultiset = %q", f)
	}
}
