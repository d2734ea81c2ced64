package membercred

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

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
// Secret data is serialised, the byte list %v prints for []byte), of
// whatever stands under a token key (a token this source never read, such
// as the first read's or a rotated one, is known by its place rather than
// its value), and of anything shaped like a Kubernetes credential.
func redact(text string, tokens []string) string {
	for _, tok := range tokens {
		if tok == "" {
			continue
		}
		for _, form := range tokenForms(tok) {
			text = strings.ReplaceAll(text, form, redacted)
		}
	}
	text = redactEncodedTokenKeys(text)
	text = redactTokenKeys(text)
	return credentialShapes.ReplaceAllString(text, redacted)
}

// tokenKey finds a key ending in "token" (any case: a Secret's "token",
// a struct's Token or BearerToken, "access_token") with what separates it
// from its value, in the forms error text quotes a map or object in:
//
//	"token":"v"  "token": "v"  \\"token\\":\\"v\\"  (JSON, Go %#v maps, JSON inside a quoted string)
//	token:v  Token:"v"  token:[1 2]  (Go %v maps, %+v and %#v structs)
//	token: [1 2]  (the String() of API objects, e.g. a Secret's Data)
//	token=v  token="v"  (key=value logs, URL queries)
//
// Group 1 is the separator; it starts with a quote or backslash when the
// key itself was quoted. A bare key must be followed at once by its value:
// "token: expired" is prose, "token:expired" is a map entry.
var tokenKey = regexp.MustCompile(`(?i)token(\\*"\s*:\s*|:|=)`)

// redactTokenKeys replaces the value after every token key with redacted,
// keeping the key and any quotes around the value, so that the error still
// says what held the secret and reads as before.
func redactTokenKeys(text string) string {
	var b strings.Builder
	rest := text
	for {
		m := tokenKey.FindStringSubmatchIndex(rest)
		if m == nil {
			break
		}
		quotedKey := rest[m[2]] == '"' || rest[m[2]] == '\\'
		end := m[1]
		if !quotedKey {
			// The String() of API objects prints map entries as
			// "token: [1 2 3]": after a space only a list or a quoted
			// string is a value, a word is prose.
			if v := strings.TrimLeft(rest[end:], " "); len(v) < len(rest[end:]) && v != "" && strings.ContainsRune(`["\`, rune(v[0])) {
				end = len(rest) - len(v)
			}
		}
		b.WriteString(rest[:end])
		rest = rest[end:]
		open, n, closing := valueAt(rest, quotedKey)
		if n == 0 { // "token: " in prose, or an empty value
			continue
		}
		b.WriteString(rest[:open])
		b.WriteString(redacted)
		b.WriteString(rest[n-closing : n])
		rest = rest[n:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(rest)
	return b.String()
}

// valueAt measures the value at the start of s: n bytes in all, of which
// the first open and the last closing are its quotes (kept when it is
// redacted). A value is a quoted string at any level of escaping, a Go byte
// slice ([]uint8{...}), a %v byte list ([...]), or bare: after a quoted key
// a JSON literal (up to , } ] or a space), after a bare key everything up
// to the next space less the brackets that close the map or struct around
// it (a token never holds whitespace, so none of it is left out).
func valueAt(s string, quotedKey bool) (open, n, closing int) {
	slashes := 0
	for slashes < len(s) && s[slashes] == '\\' {
		slashes++
	}
	if slashes < len(s) && s[slashes] == '"' {
		n, terminated := quotedLen(s, slashes)
		if !terminated {
			return slashes + 1, n, 0
		}
		return slashes + 1, n, slashes + 1
	}
	for _, brackets := range []struct{ open, close string }{{"[]uint8{", "}"}, {"[]byte{", "}"}, {"[", "]"}} {
		if strings.HasPrefix(s, brackets.open) {
			if i := strings.Index(s[len(brackets.open):], brackets.close); i >= 0 {
				return 0, len(brackets.open) + i + len(brackets.close), 0
			}
			return 0, len(s), 0
		}
	}
	end := strings.IndexFunc(s, unicode.IsSpace)
	if end < 0 {
		end = len(s)
	}
	if quotedKey {
		if i := strings.IndexAny(s[:end], ",}]"); i >= 0 {
			end = i
		}
		return 0, end, 0
	}
	return 0, len(strings.TrimRight(s[:end], "]})")), 0
}

// quotedLen is the length of the quoted string at the start of s, whose
// opening quote follows level backslashes. At level 0 a backslash escapes
// the next byte. Inside a string quoted once more (level n > 0: JSON inside
// a Go or JSON string), the closing quote is the one preceded by exactly n
// backslashes; a quote inside the value carries more. An unterminated
// string runs to the end: better too much redacted than a token cut short.
func quotedLen(s string, level int) (n int, terminated bool) {
	i := level + 1
	for i < len(s) {
		switch {
		case level == 0 && s[i] == '\\':
			i += 2
		case level == 0 && s[i] == '"':
			return i + 1, true
		case level > 0 && s[i] == '\\':
			run := 0
			for i+run < len(s) && s[i+run] == '\\' {
				run++
			}
			if run == level && i+run < len(s) && s[i+run] == '"' {
				return i + run + 1, true
			}
			i += run + 1
		default:
			i++
		}
	}
	return len(s), false
}

// base64Run finds text that may be base64 (standard or URL alphabet,
// padded or not) long enough to hold a token key.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{12,}={0,2}`)

// redactEncodedTokenKeys replaces every base64 run that decodes to text with
// a token key (an object quoted base64-encoded, as in a Secret's data or an
// admission request) as a whole: its value cannot be cut out in place.
func redactEncodedTokenKeys(text string) string {
	return base64Run.ReplaceAllStringFunc(text, func(run string) string {
		if encodesTokenKey(run) {
			return redacted
		}
		return run
	})
}

// encodesTokenKey reports whether run, or a part of it, is the base64 of text
// with a token key, in either alphabet. base64Run joins both alphabets, so a
// standard encoding (which may hold '+' or '/') can sit in one run behind
// stray characters of the URL alphabet ('-', '_': "key_eyJ0b2..."), or the
// other way round; so each alphabet is tried on every stretch of the run
// free of the other alphabet's characters. Within a stretch, skipping up to
// three leading characters covers every alignment of an encoding behind
// stray characters of its own alphabet (they decode as leading garbage), and
// decoding without padding, after dropping a last character that cannot end
// an encoding, covers stray characters after it. Linear in the run: each
// stretch is decoded at most four times per alphabet.
func encodesTokenKey(run string) bool {
	body := strings.TrimRight(run, "=")
	for _, alphabet := range []struct {
		enc     *base64.Encoding
		foreign string
	}{{base64.RawStdEncoding, "-_"}, {base64.RawURLEncoding, "+/"}} {
		for _, stretch := range strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune(alphabet.foreign, r) }) {
			for skip := 0; skip < 4 && skip < len(stretch); skip++ {
				b := stretch[skip:]
				if len(b)%4 == 1 {
					b = b[:len(b)-1]
				}
				if decoded, err := alphabet.enc.DecodeString(b); err == nil && tokenKey.MatchString(string(decoded)) {
					return true
				}
			}
		}
	}
	return false
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
