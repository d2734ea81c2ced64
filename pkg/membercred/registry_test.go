package membercred

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func registryOpts(st *secretStore, initial string) SecretTokenSourceOptions {
	return SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
		Getter: st.get, InitialToken: initial, Logger: (&logLines{}).logger(),
	}
}

// TestRegistrySharesOneSourcePerCluster: clients built per call (as Karmada's
// object watcher and status controller do) share one cache, so a rotation
// found by one client costs one Secret read for all of them, and every
// client recovers without a 401 of its own.
func TestRegistrySharesOneSourcePerCluster(t *testing.T) {
	srv := newAPIServer(t, "new") // "old" is revoked
	st := storeWithToken("new")
	m, _ := newTestMetrics(t)
	reg := NewRegistry(m)

	var clients []*http.Client
	for range 10 {
		src, err := reg.Source(registryOpts(st, "old"))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, client(srv, src))
	}
	for i, c := range clients {
		if code, _ := get(t, c, srv.URL); code != http.StatusOK {
			t.Fatalf("client %d got %d, want 200", i, code)
		}
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times for 10 clients of one cluster, want 1", n)
	}
	if got := counter(t, m.unauthorized, "member1"); got != 1 {
		t.Errorf("unauthorized_total = %d, want 1: the first client's forced read serves the other nine", got)
	}
	if n := reg.Len(); n != 1 {
		t.Errorf("registry holds %d sources, want 1", n)
	}
}

// TestRegistryAdoptsANewerToken: a client built after the Secret changed
// passes the token it just read; the shared source re-reads the Secret
// rather than keep serving its older copy until the next 401.
func TestRegistryAdoptsANewerToken(t *testing.T) {
	st := storeWithToken("old")
	reg := NewRegistry(nil)
	src, err := reg.Source(registryOpts(st, "old"))
	if err != nil {
		t.Fatal(err)
	}
	st.set("new")
	if _, err := reg.Source(registryOpts(st, "new")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the read started by the newer token", func() bool { return st.calls.Load() == 1 && settled(src) })
	if tok, _ := src.Token(); tok.AccessToken != "new" {
		t.Errorf("token = %q, want the Secret's new one", tok.AccessToken)
	}
	if _, err := reg.Source(registryOpts(st, "new")); err != nil {
		t.Fatal(err)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("getter called %d times, want 1: an unchanged token costs no read", n)
	}
}

func TestRegistryReplacesOnSecretChangeAndForgets(t *testing.T) {
	st := storeWithToken("t")
	m, reg := newTestMetrics(t)
	r := NewRegistry(m)
	a, _ := r.Source(registryOpts(st, "t"))
	opts := registryOpts(st, "t")
	opts.Name = "member1-rotated"
	b, _ := r.Source(opts)
	if a == b {
		t.Error("a new Secret reference reused the old source")
	}
	if n, err := testutil.GatherAndCount(reg, "holdfast_member_credential_last_refresh_timestamp_seconds"); err != nil || n != 1 {
		t.Fatalf("last_refresh series = %d, %v; want 1 before Forget", n, err)
	}
	r.Forget("member1")
	if n := r.Len(); n != 0 {
		t.Errorf("registry holds %d sources after Forget, want 0", n)
	}
	if n, err := testutil.GatherAndCount(reg, "holdfast_member_credential_last_refresh_timestamp_seconds"); err != nil || n != 0 {
		t.Errorf("last_refresh series = %d, %v after Forget; want 0", n, err)
	}
	if _, err := r.Source(SecretTokenSourceOptions{Cluster: "x"}); err == nil || !strings.Contains(err.Error(), "Getter") {
		t.Errorf("Source with bad options = %v, want a validation error", err)
	}
}

// TestRegistryLookup: Lookup finds the source Source built, and none after
// Forget.
func TestRegistryLookup(t *testing.T) {
	r := NewRegistry(nil)
	if r.Lookup("m1") != nil {
		t.Fatal("a source before any was built")
	}
	src, err := r.Source(SecretTokenSourceOptions{Cluster: "m1", Namespace: "ns", Name: "m1", Getter: storeWithToken("t").get})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup("m1"); got != src {
		t.Fatalf("Lookup = %p, want the source Source built (%p)", got, src)
	}
	r.Forget("m1")
	if r.Lookup("m1") != nil {
		t.Fatal("a source after Forget")
	}
}
