package hubfollow

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Claim is one hub's declaration of which hub is Active, read from
// status.activeController on the worker's own Cluster CR (kubeslice/apis PR
// #46; the released apis modules lack the field, so it is read unstructured).
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

// decodeClaim reads status.activeController from the JSON of a Cluster
// object. It is pure: no I/O, no clock, no logging.
//
// It returns ok=false with a nil error when the hub published nothing usable
// (no status, no activeController, or an empty endpoint or identity: a claim
// counts only if both are set), and an error when the field is malformed
// (wrong types, an oversized string, a caBundle that is not base64 PEM). An
// unparseable lastUpdated is not malformed; it sorts oldest.
func decodeClaim(body []byte) (claim Claim, ok bool, err error) {
	var obj map[string]interface{}
	// apimachinery's json keeps integers as int64, as the dynamic client does.
	if err := utiljson.Unmarshal(body, &obj); err != nil {
		return Claim{}, false, fmt.Errorf("not a JSON object: %w", err)
	}
	if obj == nil {
		return Claim{}, false, fmt.Errorf("not a JSON object: got null")
	}
	status, present, err := nestedObject(obj, "status")
	if err != nil || !present {
		return Claim{}, false, err
	}
	ac, present, err := nestedObject(status, "activeController")
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
		if *f.dst, err = boundedString(ac, f.name, f.max); err != nil {
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

// nestedObject returns obj[key] as an object; absent and JSON null are "not
// present", anything else but an object is an error.
func nestedObject(obj map[string]interface{}, key string) (map[string]interface{}, bool, error) {
	v, found := obj[key]
	if !found || v == nil {
		return nil, false, nil
	}
	m, isObject := v.(map[string]interface{})
	if !isObject {
		return nil, false, fmt.Errorf("%s: want an object, got %s", key, jsonType(v))
	}
	return m, true, nil
}

// boundedString returns obj[key] as a string of at most max bytes; absent and
// JSON null read as "".
func boundedString(obj map[string]interface{}, key string, max int) (string, error) {
	v, found := obj[key]
	if !found || v == nil {
		return "", nil
	}
	s, isString := v.(string)
	if !isString {
		return "", fmt.Errorf("%s: want a string, got %s", key, jsonType(v))
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

// jsonType names the JSON type of an unstructured value for an error message;
// the value itself is never echoed (it could be huge).
func jsonType(v interface{}) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int, int32, float64, float32:
		return "a number"
	case []interface{}:
		return "an array"
	case map[string]interface{}:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
