package hubfollow

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// refDecodeClaim is decodeClaim as it was before it decoded typed: the whole
// object into map[string]interface{}. It is the reference the typed decoder
// is checked against, and the benchmark's baseline.
func refDecodeClaim(body []byte) (claim Claim, ok bool, err error) {
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(body, &obj); err != nil {
		return Claim{}, false, fmt.Errorf("not a JSON object: %w", err)
	}
	if obj == nil {
		return Claim{}, false, fmt.Errorf("not a JSON object: got null")
	}
	status, present, err := refNestedObject(obj, "status")
	if err != nil || !present {
		return Claim{}, false, err
	}
	ac, present, err := refNestedObject(status, "activeController")
	if err != nil || !present {
		if err != nil {
			err = fmt.Errorf("status.%w", err)
		}
		return Claim{}, false, err
	}
	var caBundle, lastUpdated string
	fields := []struct {
		name string
		dst  *string
		max  int
	}{
		{"endpoint", &claim.Endpoint, maxEndpointBytes},
		{"activeIdentity", &claim.Identity, maxIdentityBytes},
		{"caBundle", &caBundle, maxCABundleBytes},
		{"lastUpdated", &lastUpdated, maxLastUpdatedBytes},
	}
	for _, f := range fields {
		if *f.dst, err = refBoundedString(ac, f.name, f.max); err != nil {
			return Claim{}, false, fmt.Errorf("status.activeController.%w", err)
		}
	}
	if caBundle != "" {
		if claim.CABundle, err = decodePEMBundle(caBundle); err != nil {
			return Claim{}, false, fmt.Errorf("status.activeController.caBundle: %w", err)
		}
	}
	if t, err := time.Parse(time.RFC3339, lastUpdated); err == nil {
		claim.LastUpdated = t
	}
	if claim.Endpoint == "" || claim.Identity == "" {
		return Claim{}, false, nil
	}
	return claim, true, nil
}

func refNestedObject(obj map[string]interface{}, key string) (map[string]interface{}, bool, error) {
	v, found := obj[key]
	if !found || v == nil {
		return nil, false, nil
	}
	m, isObject := v.(map[string]interface{})
	if !isObject {
		return nil, false, fmt.Errorf("%s: want an object, got %T", key, v)
	}
	return m, true, nil
}

func refBoundedString(obj map[string]interface{}, key string, max int) (string, error) {
	v, found := obj[key]
	if !found || v == nil {
		return "", nil
	}
	s, isString := v.(string)
	if !isString {
		return "", fmt.Errorf("%s: want a string, got %T", key, v)
	}
	if len(s) > max {
		return "", fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", key, len(s), max)
	}
	return s, nil
}

// FuzzDecodeClaimMatchesUnstructured: the typed decoder classifies every
// body as the unstructured decode did (claim, no claim, malformed) and reads
// the same claim. Two differences are intended: a claim string is bounded on
// its JSON text before it is decoded, so a value within the bound only once
// its escapes are decoded is now refused; and a value outside the claim is
// skipped, not converted, so a number beyond float64 there (1e700, valid JSON
// the map decode could not hold) no longer makes the answer malformed.
func FuzzDecodeClaimMatchesUnstructured(f *testing.F) {
	for _, s := range []string{
		clusterJSON(map[string]interface{}{"endpoint": "https://hub-b:6443", "activeIdentity": "hub-b", "caBundle": testCABundle, "lastUpdated": "2026-08-25T16:42:00Z"}),
		clusterJSON(map[string]interface{}{"endpoint": 1, "activeIdentity": []int{1}}),
		clusterJSON(nil),
		`{"status":{"activeController":{"endpoint":"e","activeIdentity":"i"}},"status":{}}`,
		`{"status":{"activeController":{"endpoint":"e","activeIdentity":"i"}},"status":null}`,
		`{"status":"x","status":{"activeController":{"endpoint":"e","activeIdentity":"i"}}}`,
		`{"Status":{"activeController":{"endpoint":"e","activeIdentity":"i"}}}`,
		`{"st\u0061tus":{"activeController":{"endpoint":"e\u0041","activeIdentity":"i"}}}`,
		`{"status":{"activeController":{"endpoint":"\ud83d\ude00","activeIdentity":"` + "\xff" + `"}}}`,
		` {"status" : { "activeController" : null } } `,
		`{"status":{"activeController":{"endpoint":"e","activeIdentity":"i"}}} x`,
		`{"status":[],"x":{}}`, `{"status":1e400}`, `null`, `[]`, `{}`, `"x"`, ``, ` `, `0`, `tru`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		claim, ok, err := decodeClaim(body)
		refClaim, refOK, refErr := refDecodeClaim(body)
		if err != nil && refErr == nil && strings.Contains(err.Error(), "bytes exceeds the") {
			return // bounded on the JSON text
		}
		if err == nil && refErr != nil && strings.Contains(refErr.Error(), "cannot unmarshal number") {
			return // an unconvertible number outside the claim
		}
		if (err != nil) != (refErr != nil) || ok != refOK {
			t.Fatalf("typed: ok=%v err=%v; unstructured: ok=%v err=%v", ok, err, refOK, refErr)
		}
		if claim.Endpoint != refClaim.Endpoint || claim.Identity != refClaim.Identity ||
			!bytes.Equal(claim.CABundle, refClaim.CABundle) || !claim.LastUpdated.Equal(refClaim.LastUpdated) {
			t.Fatalf("typed claim %+v, unstructured %+v", claim, refClaim)
		}
	})
}
