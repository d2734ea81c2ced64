package membercred

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
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

// rawToken returns what secret holds under SecretTokenKey, trimmed, or ""
// when it holds nothing there. It is used only to know what to redact, so a
// value that is not a usable token still counts.
func rawToken(secret *corev1.Secret) string {
	if secret == nil {
		return ""
	}
	return strings.TrimSpace(string(secret.Data[SecretTokenKey]))
}

// Shapes of credentials that error text may quote although this source never
// read them (a webhook echoing a Secret written a moment ago): ServiceAccount
// JWTs (header and payload are base64url JSON objects, so both begin "eyJ"),
// the same base64-encoded as in Secret data ("ZXlK" is base64 of "eyJ"), and
// bootstrap tokens.
var credentialShapes = regexp.MustCompile(
	`eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*` +
		`|ZXlK[A-Za-z0-9+/_-]{16,}={0,2}` +
		`|\b[a-z0-9]{6}\.[a-z0-9]{16}\b`)

const redacted = "[redacted]"

// redact scrubs text that came from outside this package (a getter's error
// or panic value, which it does not control) of every token in tokens, in
// each form an error is likely to quote it (as is, JSON/Go-quoted, base64 as
// Secret data is serialised, the byte list %v prints for []byte), and of
// anything shaped like a Kubernetes credential.
func redact(text string, tokens []string) string {
	for _, tok := range tokens {
		if tok == "" {
			continue
		}
		for _, form := range tokenForms(tok) {
			text = strings.ReplaceAll(text, form, redacted)
		}
	}
	return credentialShapes.ReplaceAllString(text, redacted)
}

// tokenForms lists the encodings of tok that redact removes. The raw form is
// last: replacing it first could cut a longer encoding that contains it.
func tokenForms(tok string) []string {
	b := []byte(tok)
	quoted, _ := json.Marshal(tok)
	forms := []string{
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		strings.Trim(fmt.Sprint(b), "[]"),
		strings.Trim(string(quoted), `"`),
		strings.Trim(strconv.Quote(tok), `"`),
		tok,
	}
	return forms
}
