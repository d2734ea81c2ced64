package scale

import (
	"encoding/json"
	"testing"
	"time"
)

// ev is one audit event as a member kube-apiserver writes it: at and end
// are its requestReceivedTimestamp and stageTimestamp after base.
type ev struct {
	id, stage, verb, agent, user, resource, ns, uri string
	code                                            int
	at, end                                         time.Duration
}

func (e ev) line(t *testing.T, base time.Time) string {
	t.Helper()
	m := map[string]any{
		"auditID": e.id, "stage": e.stage, "verb": e.verb, "userAgent": e.agent, "requestURI": e.uri,
		"user":                     map[string]any{"username": e.user},
		"responseStatus":           map[string]any{"code": e.code},
		"requestReceivedTimestamp": base.Add(e.at).Format(time.RFC3339Nano),
		"stageTimestamp":           base.Add(e.end).Format(time.RFC3339Nano),
	}
	if e.resource != "" {
		m["objectRef"] = map[string]any{"resource": e.resource, "namespace": e.ns}
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data) + "\n"
}

const (
	adapterUA = "karmada-metrics-adapter/v1.18.2 (linux/amd64) kubernetes/abc"
	searchUA  = "karmada-search/v1.18.2 (linux/amd64) kubernetes/abc"
	cmUA      = "karmada-controller-manager/v1.18.2 (linux/amd64) kubernetes/abc"
	oldUA     = "old-controller-manager/v1.18.2 (linux/amd64) kubernetes/abc"
	scaleUA   = "scale.test/v0.0.0 (linux/amd64) kubernetes/$Format"
)

func member(n string) string { return "system:serviceaccount:karmada-cluster:karmada-member-" + n }

const sec = time.Second

// relistLog is one member kube-apiserver's log over two processes (the
// first SIGKILLed at 100 s, the second appended to the same file) with a
// list of each cause in the window [120 s, 200 s].
func relistLog(t *testing.T) []ev {
	t.Helper()
	ms := time.Millisecond
	return []ev{
		// member-001's adapter node informer: listed and watched before
		// the kill; the kill cut the watch (ResponseStarted only). After
		// the restart its watch is refused once (401, no user) and the
		// patched transport replays it (same URI, with the user); the
		// replayed watch ends at once (410 Gone in the stream, logged 200)
		// and the informer relists: the cut caused it.
		{"a1", "ResponseComplete", "list", adapterUA, member("001"), "nodes", "", "/api/v1/nodes?limit=500", 200, 10 * sec, 10 * sec},
		{"a2", "ResponseStarted", "watch", adapterUA, member("001"), "nodes", "", "/api/v1/nodes?watch=true&resourceVersion=5&timeoutSeconds=411", 200, 11 * sec, 11 * sec},
		{"a3", "ResponseComplete", "watch", adapterUA, "", "nodes", "", "/api/v1/nodes?watch=true&resourceVersion=5&timeoutSeconds=377", 401, 150 * sec, 150 * sec},
		{"a4", "ResponseStarted", "watch", adapterUA, member("001"), "nodes", "", "/api/v1/nodes?watch=true&resourceVersion=5&timeoutSeconds=377", 200, 150*sec + 20*ms, 150*sec + 20*ms},
		{"a4", "ResponseComplete", "watch", adapterUA, member("001"), "nodes", "", "/api/v1/nodes?watch=true&resourceVersion=5&timeoutSeconds=377", 200, 150*sec + 20*ms, 150*sec + 30*ms},
		{"a5", "ResponseComplete", "list", adapterUA, member("001"), "nodes", "", "/api/v1/nodes?limit=500", 200, 151 * sec, 151 * sec},

		// member-002's search pod informer: its watch ended on its own
		// before the kill; after the restart a watch is refused (401)
		// and nothing replays it: the informer saw the 401 and relisted.
		{"b1", "ResponseComplete", "list", searchUA, member("002"), "pods", "", "/api/v1/pods?limit=500", 200, 10 * sec, 10 * sec},
		{"b2", "ResponseStarted", "watch", searchUA, member("002"), "pods", "", "/api/v1/pods?watch=true&timeoutSeconds=50", 200, 11 * sec, 11 * sec},
		{"b2", "ResponseComplete", "watch", searchUA, member("002"), "pods", "", "/api/v1/pods?watch=true&timeoutSeconds=50", 200, 11 * sec, 61 * sec},
		{"b3", "ResponseComplete", "watch", searchUA, "", "pods", "", "/api/v1/pods?watch=true&timeoutSeconds=300", 401, 130 * sec, 130 * sec},
		{"b4", "ResponseComplete", "list", searchUA, member("002"), "pods", "", "/api/v1/pods?limit=500", 200, 132 * sec, 132 * sec},

		// member-003's controller-manager Deployment informer in
		// scale-003: first seen in the window. Its watch logs two stages:
		// one request.
		{"c1", "ResponseComplete", "list", cmUA, member("003"), "deployments", "scale-003", "/apis/apps/v1/namespaces/scale-003/deployments", 200, 120 * sec, 120 * sec},
		{"c2", "ResponseStarted", "watch", cmUA, member("003"), "deployments", "scale-003", "/apis/apps/v1/namespaces/scale-003/deployments?watch=true", 200, 121 * sec, 121 * sec},
		{"c2", "ResponseComplete", "watch", cmUA, member("003"), "deployments", "scale-003", "/apis/apps/v1/namespaces/scale-003/deployments?watch=true", 200, 121 * sec, 160 * sec},

		// member-004's controller-manager node informer: its watch cut
		// by the kill; its relist's first attempt is refused (401) and
		// replayed: two list requests, one relist, caused by the cut.
		{"d1", "ResponseComplete", "list", cmUA, member("004"), "nodes", "", "/api/v1/nodes?limit=500", 200, 10 * sec, 10 * sec},
		{"d2", "ResponseStarted", "watch", cmUA, member("004"), "nodes", "", "/api/v1/nodes?watch=true&timeoutSeconds=500", 200, 11 * sec, 11 * sec},
		{"d3", "ResponseComplete", "list", cmUA, "", "nodes", "", "/api/v1/nodes?limit=500&resourceVersion=0", 401, 170 * sec, 170 * sec},
		{"d4", "ResponseComplete", "list", cmUA, member("004"), "nodes", "", "/api/v1/nodes?limit=500&resourceVersion=0", 200, 170*sec + 50*ms, 170*sec + 60*ms},

		// member-005's controller-manager namespace informer: its watch
		// ran 60 s and ended with no error, then a list: neither the
		// credential nor the restart.
		{"e1", "ResponseComplete", "list", cmUA, member("005"), "namespaces", "", "/api/v1/namespaces", 200, 10 * sec, 10 * sec},
		{"e2", "ResponseStarted", "watch", cmUA, member("005"), "namespaces", "", "/api/v1/namespaces?watch=true", 200, 110 * sec, 110 * sec},
		{"e2", "ResponseComplete", "watch", cmUA, member("005"), "namespaces", "", "/api/v1/namespaces?watch=true", 200, 110 * sec, 175 * sec},
		{"e3", "ResponseComplete", "list", cmUA, member("005"), "namespaces", "", "/api/v1/namespaces", 200, 176 * sec, 176 * sec},

		// A pristine binary with a revoked token: its watch refused,
		// then its lists, every one refused (no user, never replayed).
		{"f1", "ResponseComplete", "watch", oldUA, "", "configmaps", "", "/api/v1/configmaps?watch=true&timeoutSeconds=400", 401, 177 * sec, 177 * sec},
		{"f2", "ResponseComplete", "list", oldUA, "", "configmaps", "", "/api/v1/configmaps?limit=500", 401, 178 * sec, 178 * sec},
		{"f3", "ResponseComplete", "list", oldUA, "", "configmaps", "", "/api/v1/configmaps?limit=500", 401, 190 * sec, 190 * sec},

		// Outside the window, and the harness's own list: not counted.
		{"o1", "ResponseComplete", "list", cmUA, member("006"), "namespaces", "", "/api/v1/namespaces", 200, 119 * sec, 119 * sec},
		{"o2", "ResponseComplete", "list", cmUA, member("006"), "namespaces", "", "/api/v1/namespaces", 200, 201 * sec, 201 * sec},
		{"h1", "ResponseComplete", "list", scaleUA, "admin", "deployments", "", "/apis/apps/v1/deployments", 200, 150 * sec, 150 * sec},
	}
}

func TestListCauses(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var lines []string
	for _, e := range relistLog(t) {
		lines = append(lines, e.line(t, base))
	}
	events := readEvents(t, lines...)
	r := CountRequests(events, base.Add(120*sec), base.Add(200*sec), "scale.test")
	if r.Lists != 8 {
		t.Errorf("lists %d, want 8 (%v)", r.Lists, r.ByCall)
	}
	want := map[string]int{CauseWatchCut: 2, CauseAfter401: 3, CauseNewInformer: 1, CauseReplay: 1, CauseOther: 1}
	for c, n := range want {
		if r.ListsByCause[c] != n {
			t.Errorf("lists %q: %d, want %d (all: %v)", c, r.ListsByCause[c], n, r.ListsByCause)
		}
	}
	if len(r.ListsByCause) != len(want) {
		t.Errorf("causes %v, want %v", r.ListsByCause, want)
	}
	for cause, calls := range map[string]map[string]int{
		CauseWatchCut:    {"karmada-metrics-adapter nodes": 1, "karmada-controller-manager nodes": 1},
		CauseAfter401:    {"karmada-search pods": 1, "old-controller-manager configmaps": 2},
		CauseNewInformer: {"karmada-controller-manager deployments": 1},
		CauseReplay:      {"karmada-controller-manager nodes": 1},
		CauseOther:       {"karmada-controller-manager namespaces": 1},
	} {
		for call, n := range calls {
			if got := r.ListCauses[cause][call]; got != n {
				t.Errorf("%s, %s: %d, want %d (all: %v)", cause, call, got, n, r.ListCauses)
			}
		}
	}
	// c2's two stages are one request; every other request in the window
	// has one event.
	if r.ByVerb["watch"] != 5 {
		t.Errorf("watches %d, want 5 (a4, b3, c2, f1 and a3): %v", r.ByVerb["watch"], r.ByVerb)
	}
	sum := r.Add(r)
	if sum.ListsByCause[CauseAfter401] != 6 || sum.ListCauses[CauseWatchCut]["karmada-metrics-adapter nodes"] != 2 || r.ListsByCause[CauseAfter401] != 3 {
		t.Errorf("Add: %v %v (operand %v)", sum.ListsByCause, sum.ListCauses, r.ListsByCause)
	}
	if z := (Requests{}).Add(Requests{}); z.ListsByCause != nil {
		t.Errorf("two unclassified counts add up to an unclassified one: %v", z.ListsByCause)
	}
}

// The file's order is the order events were written (a list when it
// completed, a watch when it started); the cause is by when each was
// received.
func TestListCausesOutOfOrder(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	log := relistLog(t)
	var lines []string
	for i := len(log) - 1; i >= 0; i-- {
		lines = append(lines, log[i].line(t, base))
	}
	r := CountRequests(readEvents(t, lines...), base.Add(120*sec), base.Add(200*sec), "scale.test")
	if r.ListsByCause[CauseWatchCut] != 2 || r.ListsByCause[CauseAfter401] != 3 || r.ListsByCause[CauseReplay] != 1 {
		t.Errorf("reversed file: %v", r.ListsByCause)
	}
}

// No audit log: no lists, and the classification ran on nothing.
func TestListCausesEmpty(t *testing.T) {
	r := CountRequests(nil, time.Time{}, time.Now())
	if r.Lists != 0 || r.ListsByCause == nil || len(r.ListsByCause) != 0 {
		t.Errorf("empty log: %+v", r)
	}
}
