package hubfollow

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// hostileBody is a Cluster object crafted to be expensive to decode, filled
// to just under the probe's response cap (the largest body a probe decodes).
type hostileBody struct {
	name string
	body []byte
}

// validClaim is a usable activeController, so decoding must find it among
// the padding rather than stop early.
const validClaim = `"activeController":{"endpoint":"https://hub-b:6443","activeIdentity":"hub-b"}`

// fill returns prefix + unit(0) + unit(1) + ... + suffix, as many units as
// keep the whole within the probe's cap.
func fill(prefix string, unit func(i int) string, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(maxProbeResponseBytes)
	b.WriteString(prefix)
	for i := 0; ; i++ {
		u := unit(i)
		if b.Len()+len(u)+len(suffix) > maxProbeResponseBytes-64 {
			break
		}
		b.WriteString(u)
	}
	b.WriteString(suffix)
	return b.Bytes()
}

func repeat(s string) func(int) string { return func(int) string { return s } }

func hostileBodies() []hostileBody {
	const depth = 1000 // well inside encoding/json's nesting limit of 10000
	nestedObject := strings.Repeat(`{"a":`, depth) + "0" + strings.Repeat("}", depth) + ","
	nestedArray := strings.Repeat("[", depth) + strings.Repeat("]", depth) + ","
	key := func(i int) string { return fmt.Sprintf(`"k%d":0,`, i) }
	return []hostileBody{
		{"deeply nested objects beside status",
			fill(`{"status":{`+validClaim+`},"spec":[`, repeat(nestedObject), `0]}`)},
		{"deeply nested arrays inside status",
			fill(`{"status":{`+validClaim+`,"x":[`, repeat(nestedArray), `0]}}`)},
		{"many small keys at the top",
			fill(`{"status":{`+validClaim+`},`, key, `"z":0}`)},
		{"many small keys inside status",
			fill(`{"status":{`+validClaim+`,"m":{`, key, `"z":0}}}`)},
		{"many small keys inside activeController",
			fill(`{"status":{"activeController":{"endpoint":"https://hub-b:6443","activeIdentity":"hub-b",`, key, `"z":0}}}`)},
		{"huge array of small objects inside status",
			fill(`{"status":{`+validClaim+`,"x":[`, repeat(`{},`), `{}]}}`)},
		{"huge array of one-key objects beside status",
			fill(`{"status":{`+validClaim+`},"x":[`, repeat(`{"a":0},`), `{}]}`)},
		{"long string inside status",
			fill(`{"status":{`+validClaim+`,"x":"`, repeat("aaaaaaaaaaaaaaaa"), `"}}`)},
		{"long string of escapes inside status",
			fill(`{"status":{`+validClaim+`,"x":"`, repeat(`\u00e9`), `"}}`)},
		{"long string of invalid UTF-8 beside status",
			fill(`{"status":{`+validClaim+`},"x":"`, repeat("\xff"), `"}`)},
		{"caBundle of invalid UTF-8 near the cap",
			fill(`{"status":{"activeController":{"endpoint":"https://hub-b:6443","activeIdentity":"hub-b","caBundle":"`, repeat("\xff"), `"}}}`)},
		{"duplicate status keys",
			fill(`{`, repeat(`"status":{`+validClaim+`},`), `"z":0}`)},
		{"duplicate status keys of growing length",
			fill(`{`, func(i int) string { return `"status":{` + validClaim + `,"x":"` + strings.Repeat("s", 8*i) + `"},` }, `"z":0}`)},
		{"duplicate endpoint keys of growing length",
			fill(`{"status":{"activeController":{"activeIdentity":"hub-b",`, func(i int) string { return `"endpoint":"` + strings.Repeat("e", i) + `",` }, `"z":0}}}`)},
	}
}

// bytesAllocated is the heap allocated by one call of f. TotalAlloc counts
// every allocation, including what a GC already freed; the test runs no
// parallel tests beside it. Once is enough: the count barely varies.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Decoding a probe's body allocates at most allocBoundFactor times the body
// plus allocBoundConst. Why this bound: what decodeClaim must hold is the raw
// JSON text of status, of activeController inside it and of the claim's four
// fields inside that (json.RawMessage copies, kept so a wrong type is named
// at its field), so a body that is nearly all one of those values is copied
// up to three times; the fourth body-size covers a duplicated key growing its
// copy (append's slack). Everything else is skipped by the decoder without
// being built. The constant covers decoding the four claim strings, each
// within its byte bound (caBundle's 256 KiB dominates), and the decoder's
// fixed costs. The body buffer itself is client-go's and not counted here.
// The map[string]interface{} decode this replaces allocated 10-50 times the
// body for the same inputs (~200 MiB for a 4 MiB body of nested objects).
const (
	allocBoundFactor = 4
	allocBoundConst  = 1 << 20
)

func TestDecodeClaimAllocationIsBoundedByBodySize(t *testing.T) {
	// Fill encoding/json's per-type caches first, so they are not counted.
	if _, ok, err := decodeClaim([]byte(`{"status":{` + validClaim + `}}`)); !ok || err != nil {
		t.Fatalf("warm-up decode: ok=%v err=%v", ok, err)
	}
	for _, hb := range hostileBodies() {
		t.Run(hb.name, func(t *testing.T) {
			if len(hb.body) > maxProbeResponseBytes || len(hb.body) < maxProbeResponseBytes-64<<10 {
				t.Fatalf("body is %d bytes; want just under the %d-byte cap", len(hb.body), maxProbeResponseBytes)
			}
			var kind string
			got := bytesAllocated(func() {
				_, ok, err := decodeClaim(hb.body)
				kind = fmt.Sprintf("ok=%v err=%v", ok, err)
			})
			limit := uint64(allocBoundFactor*len(hb.body) + allocBoundConst)
			t.Logf("%d-byte body: %d bytes allocated per decode (%.2fx), %s", len(hb.body), got, float64(got)/float64(len(hb.body)), truncate(kind, 120))
			if got > limit {
				t.Errorf("decoding a %d-byte body allocated %d bytes (%.1fx), above the bound of %d (%dx body + %d)",
					len(hb.body), got, float64(got)/float64(len(hb.body)), limit, allocBoundFactor, allocBoundConst)
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// BenchmarkDecodeClaim compares one probe's decode with the unstructured
// decode on each hostile body: go test -run '^$' -bench DecodeClaim ./pkg/hubfollow/
func BenchmarkDecodeClaim(b *testing.B) {
	for _, hb := range hostileBodies() {
		name := strings.ReplaceAll(hb.name, " ", "_")
		b.Run(name+"/typed", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(hb.body)))
			for i := 0; i < b.N; i++ {
				_, _, _ = decodeClaim(hb.body)
			}
		})
		b.Run(name+"/map", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(hb.body)))
			for i := 0; i < b.N; i++ {
				_, _, _ = refDecodeClaim(hb.body)
			}
		})
	}
}

// BenchmarkDecodeClaimRealistic: the same comparison on a Cluster object of
// the size a hub really serves (a few KiB, with managedFields).
func BenchmarkDecodeClaimRealistic(b *testing.B) {
	var managed strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&managed, `{"manager":"kubeslice-controller-%d","operation":"Update","apiVersion":"controller.kubeslice.io/v1alpha1","time":"2026-08-25T16:42:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:activeController":{".":{},"f:endpoint":{},"f:activeIdentity":{},"f:caBundle":{},"f:lastUpdated":{}},"f:cniSubnet":{},"f:nodeIPs":{}}},"subresource":"status"},`, i)
	}
	body := []byte(`{"apiVersion":"controller.kubeslice.io/v1alpha1","kind":"Cluster","metadata":{"name":"worker-1","namespace":"kubeslice-acme","uid":"3f0e7a52-8c43-4d0e-a0a4-5f1e3b6f2c11","resourceVersion":"184467","generation":4,"labels":{"worker-cluster":"worker-1"},"managedFields":[` +
		strings.TrimSuffix(managed.String(), ",") + `]},"spec":{"clusterProperty":{"geoLocation":{"cloudProvider":"aws","cloudRegion":"eu-west-1"}},"networkInterface":"eth0","nodeIPs":["10.0.1.10","10.0.1.11"]},` +
		`"status":{"cniSubnet":["10.244.0.0/16"],"nodeIPs":["10.0.1.10"],"registrationStatus":"Registered","activeController":{"endpoint":"https://hub-b.example.com:6443","activeIdentity":"hub-b_6c1f3e2a-5b7d-4f0e-9a8c-2d4b6e8f0a1c","caBundle":"` +
		testCABundle + `","lastUpdated":"2026-08-25T16:42:00Z"}}}`)
	if _, ok, err := decodeClaim(body); !ok || err != nil {
		b.Fatalf("realistic body: ok=%v err=%v", ok, err)
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (Claim, bool, error)
	}{{"typed", decodeClaim}, {"map", refDecodeClaim}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				_, _, _ = d.decode(body)
			}
		})
	}
}
