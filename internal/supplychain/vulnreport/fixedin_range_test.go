package vulnreport

import "testing"

// TestQueryFindingsFixedLooksPastOtherRangeTypes: an affected entry may
// list a GIT range (commit hashes) before its SEMVER range; the GIT range
// is passed over and the SEMVER range after it still gives the fix.
func TestQueryFindingsFixedLooksPastOtherRangeTypes(t *testing.T) {
	const karmada = "github.com/karmada-io/karmada"
	affected := obj{"package": obj{"name": karmada, "ecosystem": "Go"}, "ranges": []obj{
		{"type": "GIT", "repo": "https://github.com/karmada-io/karmada", "events": []obj{{"introduced": "0"}, {"fixed": "3f2a9c1e"}}},
		{"type": "SEMVER", "events": []obj{{"introduced": "0"}, {"fixed": "1.12.0"}}},
	}}
	s := decode(t, streamOf(t,
		configMsg("file:///db"),
		osvMsg("GO-2026-4102", "a GIT range first", affected),
	))
	fs := queryFindings(s, karmada, "v1.11.0", "by version")
	if len(fs) != 1 || fs[0].Fixed != "v1.12.0" {
		t.Fatalf("findings %+v, want GO-2026-4102 fixed in v1.12.0 (its SEMVER range, after the GIT one)", fs)
	}
}
