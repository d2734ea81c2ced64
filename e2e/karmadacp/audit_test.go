package karmadacp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/controlplane"
)

// Events as kube-apiserver v1.35 writes them (trimmed): a watch reaching
// two stages, an update, a read by another user, and a failed
// authentication, which has no user.
const auditLog = `{"kind":"Event","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/apis/apps/v1/deployments?watch=true","verb":"watch","user":{"username":"system:serviceaccount:karmada-cluster:karmada-member2"},"userAgent":"karmada-controller-manager/v1.18.2","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:01.000000Z"}
{"kind":"Event","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/apis/apps/v1/deployments?watch=true","verb":"watch","user":{"username":"system:serviceaccount:karmada-cluster:karmada-member2"},"userAgent":"karmada-controller-manager/v1.18.2","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:01.000000Z"}
{"kind":"Event","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/default/deployments/web","verb":"update","user":{"username":"system:serviceaccount:karmada-cluster:karmada-member2"},"userAgent":"karmada-controller-manager/v1.18.2","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:02.000000Z"}
{"kind":"Event","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/api/v1/namespaces","verb":"list","user":{"username":"holdfast-e2e-admin"},"userAgent":"holdfast-e2e","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:03.000000Z"}
{"kind":"Event","level":"Metadata","auditID":"a4","stage":"ResponseStarted","requestURI":"/api/v1/nodes","verb":"list","user":{},"userAgent":"karmada-controller-manager/v1.18.2","responseStatus":{"code":401},"requestReceivedTimestamp":"2026-12-03T12:00:04.000000Z"}
{"kind":"Event","level":"Metadata","auditID":"a5","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","user":{"username":"system:serviceaccount:karmada-cluster:karmada-member2"},"userAgent":"karmada-controller-manager/v1.18.2","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:09.000000Z"}
`

const member2User = "system:serviceaccount:karmada-cluster:karmada-member2"

func TestAuditWindow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(path, []byte(auditLog), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := controlplane.ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return time.Date(2026, 12, 3, 12, 0, s, 0, time.UTC) }

	w := Window(events, member2User, at(0), at(5))
	if w.ByUser != 2 || w.ByUserWrites != 1 {
		t.Errorf("member2's requests in [0s, 5s] = %d (%d writes), want 2 (1): one watch over two stages, one update", w.ByUser, w.ByUserWrites)
	}
	if len(w.Unauthorized) != 1 || !strings.Contains(w.Unauthorized[0].String(), "list /api/v1/nodes by (unauthenticated)") {
		t.Errorf("401s = %v, want the unauthenticated node list", w.Unauthorized)
	}
	if w := Window(events, member2User, at(5), at(10)); w.ByUser != 1 || len(w.Unauthorized) != 0 {
		t.Errorf("[5s, 10s] = %+v, want one request and no 401", w)
	}
}
