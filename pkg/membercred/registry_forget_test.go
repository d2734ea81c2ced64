package membercred

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// clusterSeries counts the member series labelled with cluster on reg.
func clusterSeries(t *testing.T, reg prometheus.Gatherer, cluster string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					n++
				}
			}
		}
	}
	return n
}

// TestRegistryForgetOutlivesAnInFlightRead: karmada-search forgets a deleted
// cluster before its informers stop, so a Secret read may still be under
// way. Its completion must not bring back series nothing would delete again
// (a frozen last_refresh_timestamp_seconds would keep the staleness alert
// firing for a cluster that no longer exists).
func TestRegistryForgetOutlivesAnInFlightRead(t *testing.T) {
	m, reg := newTestMetrics(t)
	r := NewRegistry(m)
	st := storeWithToken("old")
	src, err := r.Source(registryOpts(st, "old"))
	if err != nil {
		t.Fatal(err)
	}
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	st.mu.Lock()
	st.gate, st.entered = gate, entered
	st.mu.Unlock()
	st.set("new")
	if _, err := r.Source(registryOpts(st, "new")); err != nil { // a newer token starts a read
		t.Fatal(err)
	}
	<-entered

	r.Forget("member1")
	if n := clusterSeries(t, reg, "member1"); n != 0 {
		t.Fatalf("%d series of member1 right after Forget, want 0", n)
	}
	close(gate)
	waitFor(t, "the in-flight read", func() bool { return settled(src) })
	if tok, _ := src.Token(); tok.AccessToken != "new" {
		t.Errorf("forgotten source serves %q, want the token its read found: clients built before Forget keep working", tok.AccessToken)
	}
	if n := clusterSeries(t, reg, "member1"); n != 0 {
		t.Errorf("%d series of member1 after a read that completed after Forget, want 0", n)
	}
}

// TestRegistryForgetSilencesClientsBuiltBefore: a client built before Forget
// keeps its source; its requests, 401s and forced reads record nothing.
func TestRegistryForgetSilencesClientsBuiltBefore(t *testing.T) {
	m, reg := newTestMetrics(t)
	r := NewRegistry(m)
	st := storeWithToken("t")
	src, err := r.Source(registryOpts(st, "t"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(t) // rejects everything: 401, forced read, persisted 401
	c := client(srv, src)

	r.Forget("member1")
	if code, _ := get(t, c, srv.URL); code != http.StatusUnauthorized {
		t.Fatalf("GET through the old client = %d, want 401", code)
	}
	if n := st.calls.Load(); n != 1 {
		t.Fatalf("getter called %d times, want 1: the 401 should have forced a read", n)
	}
	if n := clusterSeries(t, reg, "member1"); n != 0 {
		t.Errorf("%d series of member1 after a request through a client built before Forget, want 0", n)
	}
}

// TestRegistryRejoinAfterForget: a cluster that joins again under the same
// name gets a new source whose series count from zero, and the forgotten
// source, still held by old clients, adds nothing to them.
func TestRegistryRejoinAfterForget(t *testing.T) {
	m, reg := newTestMetrics(t)
	r := NewRegistry(m)
	st := storeWithToken("t")
	old, err := r.Source(registryOpts(st, "t"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(t)
	oldClient := client(srv, old)
	r.Forget("member1")

	joined, err := r.Source(registryOpts(st, "t"))
	if err != nil {
		t.Fatal(err)
	}
	if joined == old {
		t.Fatal("a re-join got the forgotten source")
	}
	if n := clusterSeries(t, reg, "member1"); n != 1 {
		t.Errorf("%d series of member1 after the re-join, want 1 (last_refresh_timestamp_seconds)", n)
	}
	if code, _ := get(t, oldClient, srv.URL); code != http.StatusUnauthorized {
		t.Fatalf("GET through the old client = %d, want 401", code)
	}
	if got := counter(t, m.unauthorized, "member1"); got != 0 {
		t.Errorf("unauthorized_total{member1} = %d after a 401 of the forgotten source, want 0", got)
	}
	if code, _ := get(t, client(srv, joined), srv.URL); code != http.StatusUnauthorized {
		t.Fatalf("GET through the re-joined client = %d, want 401", code)
	}
	if got := counter(t, m.unauthorizedPersisted, "member1"); got != 1 {
		t.Errorf("unauthorized_persisted_total{member1} = %d after a persisted 401 of the re-joined source, want 1", got)
	}
}

// TestRegistryForgetSilencesReplacedSources: a source replaced by a new
// Secret reference is no longer in the registry, but clients built from it
// still record under the cluster; Forget must silence it too.
func TestRegistryForgetSilencesReplacedSources(t *testing.T) {
	m, reg := newTestMetrics(t)
	r := NewRegistry(m)
	st := storeWithToken("t")
	replaced, err := r.Source(registryOpts(st, "t"))
	if err != nil {
		t.Fatal(err)
	}
	opts := registryOpts(st, "t")
	opts.Name = "member1-moved"
	if _, err := r.Source(opts); err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(t)
	c := client(srv, replaced)

	r.Forget("member1")
	if code, _ := get(t, c, srv.URL); code != http.StatusUnauthorized {
		t.Fatalf("GET through the replaced source's client = %d, want 401", code)
	}
	if n := clusterSeries(t, reg, "member1"); n != 0 {
		t.Errorf("%d series of member1 after a request through a replaced source's client, want 0", n)
	}
}
