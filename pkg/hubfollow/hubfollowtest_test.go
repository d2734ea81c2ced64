package hubfollow

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/pkg/hubfollow/hubfollowtest"
)

// TestHubfollowtestRendersWhatTheFollowerReads decodes what hubfollowtest
// renders with the follower's own decoder: the e2e suite and the overlay's
// glue tests publish claims through hubfollowtest, and a claim the follower
// does not read as meant would make their scenarios test nothing.
func TestHubfollowtestRendersWhatTheFollowerReads(t *testing.T) {
	at := time.Date(2026, 8, 25, 16, 42, 0, 123456789, time.FixedZone("CEST", 2*3600))
	for _, tc := range []struct {
		name  string
		claim hubfollowtest.Claim
	}{
		{name: "with caBundle", claim: hubfollowtest.Claim{Identity: "hub-b", Endpoint: "https://hub-b:6443", CABundle: []byte(testPEM), LastUpdated: at}},
		{name: "without caBundle", claim: hubfollowtest.Claim{Identity: "hub-a", Endpoint: "https://hub-a:6443", LastUpdated: at}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := hubfollowtest.Cluster(testNamespace, testCluster, map[string]interface{}{"activeController": tc.claim.StatusField()})
			body, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := decodeClaim(body)
			if err != nil || !ok {
				t.Fatalf("decodeClaim(%s) = ok %v, %v; want the claim", body, ok, err)
			}
			want := Claim{Endpoint: tc.claim.Endpoint, Identity: tc.claim.Identity, CABundle: tc.claim.CABundle, LastUpdated: at}
			if !got.LastUpdated.Equal(want.LastUpdated) {
				t.Errorf("lastUpdated %v, want %v (nanoseconds kept)", got.LastUpdated, want.LastUpdated)
			}
			got.LastUpdated, want.LastUpdated = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %+v, want %+v", got, want)
			}
		})
	}
	if _, ok, err := decodeClaim(mustMarshal(t, hubfollowtest.Cluster(testNamespace, testCluster, nil))); ok || err != nil {
		t.Errorf("a Cluster without a claim decodes as ok %v, %v; want nothing published", ok, err)
	}
}

func mustMarshal(t *testing.T, v interface{}) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
