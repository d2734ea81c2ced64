package hubfollow

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Claim is one hub's declaration of which hub is Active, read from
// status.activeController on the worker's own Cluster CR (kubeslice/apis PR
// #46; the released apis modules lack the field, so it is decoded from the
// object's JSON by decodeClaim).
type Claim struct {
	// Endpoint is the Active hub's API server URL as published. It only
	// selects among the configured hubs; it is never dialled as such.
	Endpoint string
	// Identity names the Active controller.
	Identity string
	// CABundle is the decoded PEM the Active published. It is validated so a
	// corrupt declaration is visible, but the worker never trusts it: the CA
	// for each hub is the one the operator mounted, so a claim cannot add a
	// trust anchor.
	CABundle []byte
	// LastUpdated is when the Active last republished; zero when missing or
	// unparseable, which sorts oldest.
	LastUpdated time.Time
}

// Bounds on the claim's strings. A real API server already caps an object
// (etcd's 1.5 MiB request limit), but the values end up in logs and in the
// resolver's state, and a field far beyond any legitimate value means the
// declaration is not one to act on.
const (
	// maxEndpointBytes: a DNS name is at most 253 bytes; 2 KiB leaves room for
	// scheme, port and a proxy path prefix.
	maxEndpointBytes = 2048
	// maxIdentityBytes: a leader-election identity is hostname_UUID, at most
	// 253+37 bytes; 1 KiB is generous.
	maxIdentityBytes = 1024
	// maxCABundleBytes (base64 text): 256 KiB is a few hundred certificates,
	// far more than any CA bundle a hub serves.
	maxCABundleBytes = 256 << 10
	// maxLastUpdatedBytes: RFC 3339 with nanoseconds and an offset is 35 bytes.
	maxLastUpdatedBytes = 64
)

// clusterDoc, statusDoc and rawClaim are the only parts of a Cluster object a
// claim is read from. Decoding into them, every other key of the object is
// skipped by the decoder's scanner without being built, so a hostile body
// near the probe's cap costs a few copies of itself (the raw text of status,
// of activeController within it, of the four fields within that) instead of
// a map per object and an interface per value (~50x the body for deeply
// nested objects). Each level is kept as raw JSON rather than a nested struct
// so a wrong type can be named at the field it is in: the decoder's own type
// error is internal to sigs.k8s.io/json and names Go types.
type clusterDoc struct {
	Status json.RawMessage `json:"status"`
}

type statusDoc struct {
	ActiveController json.RawMessage `json:"activeController"`
}

type rawClaim struct {
	Endpoint       json.RawMessage `json:"endpoint"`
	ActiveIdentity json.RawMessage `json:"activeIdentity"`
	CABundle       json.RawMessage `json:"caBundle"`
	LastUpdated    json.RawMessage `json:"lastUpdated"`
}

// decodeClaim reads status.activeController from the JSON of a Cluster
// object. It is pure: no I/O, no clock, no logging.
//
// It returns ok=false with a nil error when the hub published nothing usable
// (no status, no activeController, or an empty endpoint or identity: a claim
// counts only if both are set), and an error when the field is malformed
// (wrong types, an oversized string, a caBundle that is not base64 PEM). An
// unparseable lastUpdated is not malformed; it sorts oldest.
//
// Keys match case-sensitively, as the API server's do (apimachinery's json,
// which the unstructured decode used too). With a key repeated, the last one
// counts, as in any JSON object decode. Values outside the claim are only
// checked to be JSON, not converted (a number beyond float64 there is fine).
func decodeClaim(body []byte) (claim Claim, ok bool, err error) {
	var doc clusterDoc
	if err := utiljson.Unmarshal(body, &doc); err != nil {
		if t := jsonType(body); t != "an object" && json.Valid(body) {
			return Claim{}, false, fmt.Errorf("not a JSON object: got %s", t)
		}
		return Claim{}, false, fmt.Errorf("not a JSON object: %w", err)
	}
	if t := jsonType(body); t != "an object" {
		return Claim{}, false, fmt.Errorf("not a JSON object: got %s", t)
	}
	var status statusDoc
	present, err := nestedObject(doc.Status, "status", &status)
	if err != nil || !present {
		return Claim{}, false, err
	}
	var ac rawClaim
	present, err = nestedObject(status.ActiveController, "activeController", &ac)
	if err != nil || !present {
		if err != nil {
			err = fmt.Errorf("status.%w", err)
		}
		return Claim{}, false, err
	}
	var caBundle, lastUpdated string
	fields := []struct {
		name string
		raw  json.RawMessage
		dst  *string
		max  int
	}{
		{"endpoint", ac.Endpoint, &claim.Endpoint, maxEndpointBytes},
		{"activeIdentity", ac.ActiveIdentity, &claim.Identity, maxIdentityBytes},
		{"caBundle", ac.CABundle, &caBundle, maxCABundleBytes},
		{"lastUpdated", ac.LastUpdated, &lastUpdated, maxLastUpdatedBytes},
	}
	for _, f := range fields {
		if *f.dst, err = boundedString(f.raw, f.name, f.max); err != nil {
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

// nestedObject decodes raw, the value of key, into dst; absent and JSON null
// are "not present", anything else but an object is an error. raw is a value
// the decoder already validated, so decoding an object cannot fail.
func nestedObject(raw json.RawMessage, key string, dst interface{}) (bool, error) {
	switch t := jsonType(raw); t {
	case "", "null":
		return false, nil
	case "an object":
		if err := utiljson.Unmarshal(raw, dst); err != nil {
			return false, fmt.Errorf("%s: %w", key, err)
		}
		return true, nil
	default:
		return false, fmt.Errorf("%s: want an object, got %s", key, t)
	}
}

// boundedString returns raw, the value of key, as a string of at most max
// bytes; absent and JSON null read as "". The bound is checked on the JSON
// text first, so an oversized value is refused without being decoded (a
// legitimate value has no escapes, so text and value are the same length),
// and on the decoded value again, since invalid UTF-8 decodes to U+FFFD,
// three bytes for one.
func boundedString(raw json.RawMessage, key string, max int) (string, error) {
	switch t := jsonType(raw); t {
	case "", "null":
		return "", nil
	case "a string":
	default:
		return "", fmt.Errorf("%s: want a string, got %s", key, t)
	}
	if n := len(raw) - 2; n > max { // less the quotes
		return "", fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", key, n, max)
	}
	var s string
	if err := utiljson.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	if len(s) > max {
		return "", fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", key, len(s), max)
	}
	return s, nil
}

// decodePEMBundle checks that s is standard base64 (how Kubernetes encodes a
// []byte field) of text holding at least one PEM block.
func decodePEMBundle(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if block, _ := pem.Decode(raw); block == nil {
		return nil, fmt.Errorf("decodes to %d bytes holding no PEM block", len(raw))
	}
	return raw, nil
}

// jsonType names the JSON type of a value from its first byte, for an error
// message; the value itself is never echoed (it could be huge). It is "" for
// an empty or blank value, which is how an absent field reads.
func jsonType(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
