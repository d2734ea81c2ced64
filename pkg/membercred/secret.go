package membercred

import (
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Reasons a Secret read yields no usable token. They are the values of the
// bounded `reason` metric label and of Health.LastErrorReason.
const (
	ReasonGetError     = "get_error"     // the getter failed (other than NotFound)
	ReasonNotFound     = "not_found"     // the Secret does not exist
	ReasonNilSecret    = "nil_secret"    // the getter returned neither a Secret nor an error
	ReasonMissingKey   = "missing_key"   // no SecretTokenKey in Data (or no Data at all)
	ReasonEmptyToken   = "empty_token"   // the value is empty or only whitespace
	ReasonInvalidToken = "invalid_token" // the value cannot go in an Authorization header
)

// tokenFromSecret extracts the bearer token from a getter's result. On
// failure it returns the reason and a description that never contains any of
// the Secret's data: only the getter's own error is passed on.
func tokenFromSecret(secret *corev1.Secret, getErr error) (token, reason, detail string) {
	switch {
	case getErr != nil && apierrors.IsNotFound(getErr):
		// controller-runtime's client.Get returns a non-nil empty Secret with
		// NotFound: the error wins.
		return "", ReasonNotFound, "not found"
	case getErr != nil:
		return "", ReasonGetError, "cannot be read: " + getErr.Error()
	case secret == nil:
		return "", ReasonNilSecret, "was not returned by the getter (no Secret and no error)"
	}
	raw, ok := secret.Data[SecretTokenKey] // a nil Data map reads as missing
	if !ok {
		return "", ReasonMissingKey, fmt.Sprintf("has no %q key", SecretTokenKey)
	}
	token, reason = normalizeToken(raw)
	switch reason {
	case ReasonEmptyToken:
		return "", reason, fmt.Sprintf("has an empty %q value", SecretTokenKey)
	case ReasonInvalidToken:
		return "", reason, fmt.Sprintf("has a %q value that is not a valid bearer token (whitespace or control characters inside)", SecretTokenKey)
	}
	return token, "", ""
}

// normalizeToken trims surrounding whitespace and rejects what cannot be sent
// as "Authorization: Bearer <token>".
//
// Trimming: a Secret created with kubectl --from-literal has no trailing
// newline, but one created --from-file from a token file usually does, and
// client-go's own file token source trims for the same reason. No token
// format Kubernetes accepts (JWT, bootstrap token, static token file entry)
// can begin or end with whitespace, so trimming never changes a valid token,
// while an untrimmed newline would fail every request with an invalid header.
//
// Rejecting: anything outside visible ASCII would make net/http refuse the
// header on every request; treating it as bad input keeps the last good token
// instead. This is looser than RFC 6750's b64token on purpose: static token
// files allow other visible characters.
func normalizeToken(raw []byte) (token, reason string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return "", ReasonEmptyToken
	}
	for _, c := range trimmed {
		if c < 0x21 || c > 0x7e {
			return "", ReasonInvalidToken
		}
	}
	return string(trimmed), ""
}

// redact removes the cached token from text that came from outside this
// package (a getter's error or panic value), which it does not control.
func redact(text string, tok *cachedToken) string {
	if tok == nil || tok.token == "" {
		return text
	}
	return strings.ReplaceAll(text, tok.token, "[redacted]")
}
