package karmadacp

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
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

// A member's events as kube-apiserver writes them (trimmed): a node LIST
// over two stages, two node WATCHes sent with a resourceVersion, a
// deployment relist through WatchListClient, a pod LIST by the suite and a
// pod status update.
const readsLog = `{"auditID":"b1","stage":"ResponseStarted","requestURI":"/api/v1/nodes?limit=500\u0026resourceVersion=0","verb":"list","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"nodes","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:01Z"}
{"auditID":"b1","stage":"ResponseComplete","requestURI":"/api/v1/nodes?limit=500\u0026resourceVersion=0","verb":"list","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"nodes","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:01Z"}
{"auditID":"b2","stage":"ResponseStarted","requestURI":"/api/v1/nodes?allowWatchBookmarks=true\u0026resourceVersion=42\u0026watch=true","verb":"watch","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"nodes","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-03T12:00:02Z"}
{"auditID":"b7","stage":"ResponseComplete","requestURI":"/api/v1/nodes?allowWatchBookmarks=true\u0026resourceVersion=40\u0026watch=true","verb":"watch","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"nodes","apiVersion":"v1"},"responseStatus":{"code":410},"requestReceivedTimestamp":"2026-12-03T12:00:02Z"}
{"auditID":"b3","stage":"ResponseStarted","requestURI":"/apis/apps/v1/deployments?allowWatchBookmarks=true\u0026resourceVersionMatch=NotOlderThan\u0026sendInitialEvents=true\u0026watch=true","verb":"watch","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"deployments","apiGroup":"apps","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:03Z"}
{"auditID":"b4","stage":"ResponseComplete","requestURI":"/api/v1/pods","verb":"list","userAgent":"holdfast-e2e","objectRef":{"resource":"pods","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:04Z"}
{"auditID":"b5","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/w/pods/p/status","verb":"update","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"pods","namespace":"w","name":"p","subresource":"status","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:05Z"}
{"auditID":"b6","stage":"ResponseComplete","requestURI":"/api/v1/nodes","verb":"list","userAgent":"karmada-controller-manager/v1.18.2","objectRef":{"resource":"nodes","apiVersion":"v1"},"requestReceivedTimestamp":"2026-12-03T12:00:09Z"}
`

func TestComponentReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(readsLog), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := controlplane.ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return time.Date(2026, 12, 3, 12, 0, s, 0, time.UTC) }

	got := ComponentReads(events, "karmada-controller-manager", at(0), at(5))
	want := map[string]Reads{"nodes": {Lists: 1, Watches: 2}, "apps/deployments": {Lists: 1}}
	if !maps.Equal(got, want) {
		t.Errorf("reads in [0s, 5s] = %s, want %s (a LIST over two stages is one; a sendInitialEvents WATCH is a LIST; the suite's LIST and a status update are not counted)", FormatReads(got), FormatReads(want))
	}
	if n := Lists(got); n != 2 {
		t.Errorf("Lists = %d, want 2", n)
	}
	if got := ComponentReads(events, "karmada-search", at(0), at(10)); len(got) != 0 {
		t.Errorf("karmada-search's reads = %s, want none", FormatReads(got))
	}

	quiet := ComponentReads(events, "karmada-controller-manager", at(4), at(8))
	if r := RelistedBeyond(quiet, quiet); r != nil {
		t.Errorf("a window relisted beyond itself: %v", r)
	}
	later := ComponentReads(events, "karmada-controller-manager", at(6), at(10))
	if r := RelistedBeyond(later, quiet); !slices.Equal(r, []string{"nodes 1 > 0"}) {
		t.Errorf("RelistedBeyond = %v, want [nodes 1 > 0]", r)
	}
	if r := RelistedBeyond(quiet, got); r != nil {
		t.Errorf("fewer LISTs reported as a relist: %v", r)
	}
}
