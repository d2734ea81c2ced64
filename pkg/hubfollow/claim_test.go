package hubfollow

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestDecodeClaim(t *testing.T) {
	huge := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	ac := func(fields string) string {
		return `{"kind":"Cluster","status":{"cniSubnet":["10.1.0.0/16"],"activeController":{` + fields + `}}}`
	}
	const (
		ep = `"endpoint":"https://hub-b:6443"`
		id = `"activeIdentity":"hub-b"`
		ts = `"lastUpdated":"2026-08-25T16:42:00Z"`
	)
	ca := `"caBundle":"` + testCABundle + `"`
	t0 := time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC)

	tests := []struct {
		name      string
		body      string
		wantOK    bool
		wantErr   string // substring; "" means no error
		wantClaim Claim
	}{
		{name: "full claim", body: ac(ep + "," + id + "," + ca + "," + ts), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b", CABundle: []byte(testPEM), LastUpdated: t0}},
		{name: "no caBundle", body: ac(ep + "," + id + "," + ts), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b", LastUpdated: t0}},
		{name: "lastUpdated with offset and fraction", body: ac(ep + "," + id + `,"lastUpdated":"2026-08-25T18:42:00.5+02:00"`), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b", LastUpdated: t0.Add(500 * time.Millisecond)}},
		{name: "missing lastUpdated sorts oldest", body: ac(ep + "," + id), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "unparseable lastUpdated sorts oldest", body: ac(ep + "," + id + `,"lastUpdated":"yesterday"`), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "null lastUpdated sorts oldest", body: ac(ep + "," + id + `,"lastUpdated":null`), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "unknown fields ignored", body: ac(ep + "," + id + `,"future":{"x":1}`), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},

		{name: "escaped strings decoded", body: ac(`"endpoint":"https:\/\/hub-b:6443","activeIdentity":"hub-\u0062"`), wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "repeated status: the last counts", body: `{"status":{"activeController":{` + ep + "," + id + `}},"status":{}}`},
		{name: "repeated status: the last claim counts", body: `{"status":"x","status":{"activeController":{` + ep + "," + id + `}}}`, wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "number beyond float64 outside the claim is skipped", body: `{"spec":{"x":1e700},"status":{"activeController":{` + ep + "," + id + `}}}`, wantOK: true,
			wantClaim: Claim{Endpoint: "https://hub-b:6443", Identity: "hub-b"}},
		{name: "keys are case-sensitive", body: `{"Status":{"activeController":{` + ep + "," + id + `}}}`},
		{name: "no status", body: `{"kind":"Cluster"}`},
		{name: "null status", body: `{"status":null}`},
		{name: "no activeController", body: `{"status":{"cniSubnet":[]}}`},
		{name: "null activeController", body: `{"status":{"activeController":null}}`},
		{name: "empty activeController", body: ac(``)},
		{name: "endpoint without identity", body: ac(ep + "," + ts)},
		{name: "identity without endpoint", body: ac(id + "," + ts)},
		{name: "empty strings", body: ac(`"endpoint":"","activeIdentity":""`)},

		{name: "status not an object", body: `{"status":"ok"}`, wantErr: "status: want an object, got a string"},
		{name: "activeController an array", body: `{"status":{"activeController":[]}}`, wantErr: "status.activeController: want an object, got an array"},
		{name: "endpoint a number", body: ac(`"endpoint":6443,` + id), wantErr: "endpoint: want a string, got a number"},
		{name: "identity a bool", body: ac(ep + `,"activeIdentity":true`), wantErr: "activeIdentity: want a string, got a boolean"},
		{name: "identity an object", body: ac(ep + `,"activeIdentity":{"name":"hub-b"}`), wantErr: "activeIdentity: want a string, got an object"},
		{name: "caBundle an array", body: ac(ep + "," + id + `,"caBundle":["x"]`), wantErr: "caBundle: want a string, got an array"},
		{name: "lastUpdated a number", body: ac(ep + "," + id + `,"lastUpdated":1756140120`), wantErr: "lastUpdated: want a string, got a number"},
		{name: "caBundle not base64", body: ac(ep + "," + id + `,"caBundle":"not base64!"`), wantErr: "caBundle: not base64"},
		{name: "caBundle base64 of non-PEM", body: ac(ep + "," + id + `,"caBundle":"` + base64.StdEncoding.EncodeToString([]byte("hello")) + `"`), wantErr: "no PEM block"},
		{name: "huge endpoint", body: ac(`"endpoint":` + huge(maxEndpointBytes+1) + "," + id), wantErr: "endpoint: 2049 bytes exceeds"},
		{name: "huge identity", body: ac(ep + `,"activeIdentity":` + huge(maxIdentityBytes+1)), wantErr: "activeIdentity: 1025 bytes exceeds"},
		{name: "huge caBundle", body: ac(ep + "," + id + `,"caBundle":` + huge(maxCABundleBytes+1)), wantErr: "caBundle: 262145 bytes exceeds"},
		// Bounded on the JSON text as served: a legitimate value has no escapes.
		{name: "endpoint within the bound only once unescaped", body: ac(`"endpoint":"` + strings.Repeat(`\u0061`, maxEndpointBytes/4) + `",` + id), wantErr: "endpoint: 3072 bytes exceeds the 2048-byte limit"},
		{name: "invalid UTF-8 decoding past the bound", body: ac(`"endpoint":"` + strings.Repeat("\xff", maxEndpointBytes/2) + `",` + id), wantErr: "endpoint: 3072 bytes exceeds the 2048-byte limit"},
		{name: "huge lastUpdated", body: ac(ep + "," + id + `,"lastUpdated":` + huge(maxLastUpdatedBytes+1)), wantErr: "lastUpdated: 65 bytes exceeds"},
		{name: "malformed even without identity", body: ac(`"endpoint":1`), wantErr: "endpoint: want a string"},
		{name: "not JSON", body: `<html>hub</html>`, wantErr: "not a JSON object"},
		{name: "JSON array", body: `[]`, wantErr: "not a JSON object"},
		{name: "JSON null", body: `null`, wantErr: "not a JSON object"},
		{name: "empty body", body: ``, wantErr: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim, ok, err := decodeClaim([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if ok {
					t.Error("a malformed claim was reported usable")
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if claim.Endpoint != tt.wantClaim.Endpoint || claim.Identity != tt.wantClaim.Identity ||
				!bytes.Equal(claim.CABundle, tt.wantClaim.CABundle) || !claim.LastUpdated.Equal(tt.wantClaim.LastUpdated) {
				t.Errorf("claim = %+v, want %+v", claim, tt.wantClaim)
			}
		})
	}
}

func TestDecodeClaimErrorNeverEchoesAHugeValue(t *testing.T) {
	body := `{"status":{"activeController":{"endpoint":"` + strings.Repeat("x", 1<<20) + `","activeIdentity":"hub-b"}}}`
	_, _, err := decodeClaim([]byte(body))
	if err == nil {
		t.Fatal("want an error")
	}
	if len(err.Error()) > 200 {
		t.Errorf("error is %d bytes; a hostile value must not be copied into it", len(err.Error()))
	}
}

// FuzzDecodeClaim: whatever a hub serves, the decoder does not panic, never
// reports a claim together with an error, and every claim it does report
// satisfies the contract.
func FuzzDecodeClaim(f *testing.F) {
	seeds := []string{
		clusterJSON(map[string]interface{}{"endpoint": "https://hub-b:6443", "activeIdentity": "hub-b", "caBundle": testCABundle, "lastUpdated": "2026-08-25T16:42:00Z"}),
		clusterJSON(map[string]interface{}{"endpoint": 1, "activeIdentity": []int{1}}),
		clusterJSON(nil),
		`{"status":{"activeController":null}}`,
		`{"status":[]}`,
		`null`, `[]`, `{}`, `"x"`, ``,
		`{"status":{"activeController":{"endpoint":"e","activeIdentity":"i","caBundle":"LS0tLS1CRUdJTiBYLS0tLS0KLS0tLS1FTkQgWC0tLS0tCg=="}}}`,
		`{"status":{"activeController":{"endpoint":"e","activeIdentity":"i","lastUpdated":"9999-99-99T99:99:99Z"}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		claim, ok, err := decodeClaim(body)
		if err != nil {
			if ok {
				t.Fatalf("ok with error %v", err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error too large: %d bytes", len(err.Error()))
			}
			return
		}
		if !ok {
			return
		}
		switch {
		case claim.Endpoint == "" || claim.Identity == "":
			t.Fatalf("usable claim without endpoint or identity: %+v", claim)
		case len(claim.Endpoint) > maxEndpointBytes || len(claim.Identity) > maxIdentityBytes:
			t.Fatalf("claim exceeds the string bounds: %d/%d bytes", len(claim.Endpoint), len(claim.Identity))
		case len(claim.CABundle) > maxCABundleBytes:
			t.Fatalf("caBundle of %d bytes exceeds the bound", len(claim.CABundle))
		}
		if len(claim.CABundle) > 0 && !bytes.Contains(claim.CABundle, []byte("-----BEGIN ")) {
			t.Fatalf("caBundle accepted without a PEM block: %q", claim.CABundle)
		}
	})
}
