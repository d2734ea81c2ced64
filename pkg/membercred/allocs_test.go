package membercred

import (
	"net/http"
	"testing"
)

// TestAuthRoundTripAllocations asserts what docs/membercred.md says of the
// per-request cost (allocations are deterministic, time is not): this
// package's transport makes 4 allocations per request, fewer than
// client-go's static bearer path (a) and upstream Karmada's fix (b). The
// counts of (a) and (b) belong to client-go and differ between the
// versions this package is compiled against (hack/check-compat.sh), so
// only the order is asserted for them. The counts are the same with and
// without -race.
func TestAuthRoundTripAllocations(t *testing.T) {
	req := benchRequest(t)
	allocs := map[string]float64{}
	for _, v := range authVariants(t) {
		allocs[v.name] = testing.AllocsPerRun(100, func() {
			resp, err := v.rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: RoundTrip: %v", v.name, err)
			}
		})
	}
	a, b, c := allocs["a=client-go-static-bearer"], allocs["b=client-go-cached-token-source"], allocs["c=membercred"]
	t.Logf("allocations per request: (a) %v, (b) %v, (c) %v", a, b, c)
	if c != 4 {
		t.Errorf("(c) membercred: %v allocations per request, want 4 (docs/membercred.md)", c)
	}
	if !(c < a && c < b) {
		t.Errorf("(c) membercred makes %v allocations per request, want fewer than (a) %v and (b) %v", c, a, b)
	}
}

// TestCannedTransportRequiresTheBearer: the benchmark's transport refuses a
// request without the bearer header, so a variant that stopped setting it
// cannot pass for a fast one.
func TestCannedTransportRequiresTheBearer(t *testing.T) {
	rt := cannedTransport{resp: &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}}
	if _, err := rt.RoundTrip(benchRequest(t)); err != errNoBearer {
		t.Errorf("RoundTrip without Authorization: %v, want errNoBearer", err)
	}
	req := benchRequest(t)
	req.Header.Set("Authorization", benchBearer)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Errorf("RoundTrip with the bearer: %v", err)
	}
}
