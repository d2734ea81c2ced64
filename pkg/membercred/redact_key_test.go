package membercred

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tokens whose forms all differ: their length is not a multiple of 3 (so
// padded and unpadded base64 differ), their standard base64 holds '+' and
// '/' (so the URL alphabet differs), and they hold '<', '&', '"' and '\'
// (so JSON quoting, Go quoting and the raw value differ). Dropping any one
// form from tokenForms leaves text behind in TestRedactTokenFormsExactly.
const (
	oddToken     = `static-<?&">\`
	initialToken = `initial-?<&>"\`
	currentToken = `current-?<&>"\`
)

// allForms returns every form tokenForms promises to redact, by name.
func allForms(tok string) map[string]string {
	b := []byte(tok)
	quoted, _ := json.Marshal(tok)
	return map[string]string{
		"std":    base64.StdEncoding.EncodeToString(b),
		"rawstd": base64.RawStdEncoding.EncodeToString(b),
		"url":    base64.URLEncoding.EncodeToString(b),
		"rawurl": base64.RawURLEncoding.EncodeToString(b),
		"bytes":  fmt.Sprint(b),
		"json":   string(quoted),
		"go":     strconv.Quote(tok),
		"raw":    tok,
	}
}

func TestRedactionTokensHaveDistinctForms(t *testing.T) {
	for _, tok := range []string{oddToken, initialToken, currentToken} {
		seen := map[string]string{}
		for name, form := range allForms(tok) {
			if other, ok := seen[form]; ok {
				t.Errorf("token %q: forms %s and %s are both %q", tok, name, other, form)
			}
			seen[form] = name
		}
		if f := allForms(tok); !strings.ContainsAny(f["std"], "+") || !strings.Contains(f["std"], "/") || !strings.HasSuffix(f["std"], "=") {
			t.Errorf("token %q: standard base64 %q lacks '+', '/' or padding", tok, f["std"])
		}
	}
}

// TestRedactTokenFormsExactly: each form of a known token, quoted where no
// key gives it away, is replaced exactly, leaving the text around it (and
// no stray padding) intact.
func TestRedactTokenFormsExactly(t *testing.T) {
	f := allForms(oddToken)
	var msg, want strings.Builder
	msg.WriteString("webhook echoed")
	want.WriteString("webhook echoed")
	for _, name := range []string{"std", "rawstd", "url", "rawurl", "bytes", "json", "go", "raw"} {
		fmt.Fprintf(&msg, " %s=%s", name, f[name])
		switch name {
		case "bytes":
			fmt.Fprintf(&want, " %s=[%s]", name, redacted)
		case "json", "go":
			fmt.Fprintf(&want, " %s=%q", name, redacted)
		default:
			fmt.Fprintf(&want, " %s=%s", name, redacted)
		}
	}
	if got := redact(msg.String(), []string{oddToken}); got != want.String() {
		t.Errorf("redact(%q)\n got %q\nwant %q", msg.String(), got, want.String())
	}
}

type credentials struct {
	Name  string
	Token string
}

// TestRedactByKey: whatever stands under a token key is redacted although
// the value was never seen (no tokens are passed), in every form error text
// quotes an object in, while the object's name and the error's kind stay.
func TestRedactByKey(t *testing.T) {
	const tok = "static-token-never-read-0123"
	data := map[string][]byte{"caBundle": []byte("ca"), SecretTokenKey: []byte(tok)}
	strData := map[string]string{"caBundle": "ca", SecretTokenKey: tok}
	jsonObj := fmt.Sprintf(`{"data":{"token":%q},"metadata":{"name":"member1"}}`, tok)
	tests := []struct {
		name, text, want string
	}{
		{"JSON", `conversion webhook: bad object ` + jsonObj,
			`conversion webhook: bad object {"data":{"token":"[redacted]"},"metadata":{"name":"member1"}}`},
		{"JSON with spaces", `bad object {"token": "` + tok + `", "name": "member1"}`,
			`bad object {"token": "[redacted]", "name": "member1"}`},
		{"JSON of base64 data", fmt.Sprintf(`bad object {"data":{"token":%q}}`, base64.StdEncoding.EncodeToString([]byte(tok))),
			`bad object {"data":{"token":"[redacted]"}}`},
		{"JSON inside a quoted string", fmt.Sprintf("webhook said %q", jsonObj),
			`webhook said "{\"data\":{\"token\":\"[redacted]\"},\"metadata\":{\"name\":\"member1\"}}"`},
		{"JSON null", `bad object {"data":{"token":null},"metadata":{"name":"member1"}}`,
			`bad object {"data":{"token":[redacted]},"metadata":{"name":"member1"}}`},
		{"%v of map[string][]byte", fmt.Sprintf("cache holds %v for member1", data),
			"cache holds map[caBundle:[99 97] token:[redacted]] for member1"},
		{"%v of map[string]string", fmt.Sprintf("cache holds %v for member1", strData),
			"cache holds map[caBundle:ca token:[redacted]] for member1"},
		{"%#v of map[string][]byte", fmt.Sprintf("cache holds %#v", data),
			`cache holds map[string][]uint8{"caBundle":[]uint8{0x63, 0x61}, "token":[redacted]}`},
		{"%#v of map[string]string", fmt.Sprintf("cache holds %#v", strData),
			`cache holds map[string]string{"caBundle":"ca", "token":"[redacted]"}`},
		{"%+v of a struct", fmt.Sprintf("bad credentials %+v", credentials{Name: "member1", Token: tok}),
			"bad credentials {Name:member1 Token:[redacted]}"},
		{"%#v of a struct", fmt.Sprintf("bad credentials %#v", credentials{Name: "member1", Token: tok}),
			`bad credentials membercred.credentials{Name:"member1", Token:"[redacted]"}`},
		{"key=value", `refresh failed token="` + tok + `" secret=karmada-cluster/member1`,
			`refresh failed token="[redacted]" secret=karmada-cluster/member1`},
		{"URL query", "GET https://hub/api?token=" + tok + "&watch=1: EOF",
			"GET https://hub/api?token=[redacted] EOF"},
		{"base64 of JSON (std)", "bad patch " + base64.StdEncoding.EncodeToString([]byte(jsonObj)) + " for member1",
			"bad patch [redacted] for member1"},
		{"base64 of JSON (raw std)", "bad patch " + base64.RawStdEncoding.EncodeToString([]byte(jsonObj)) + " for member1",
			"bad patch [redacted] for member1"},
		{"base64 of JSON (url)", "bad patch " + base64.URLEncoding.EncodeToString([]byte(`{"token":"`+oddToken+`"}`)) + " for member1",
			"bad patch [redacted] for member1"},
		{"base64 of JSON (raw url)", "bad patch " + base64.RawURLEncoding.EncodeToString([]byte(`{"token":"`+oddToken+`"}`)) + " for member1",
			"bad patch [redacted] for member1"},
		// Harmless text keeps its meaning.
		{"prose after token:", `member cluster "m1": no bearer token: Secret karmada-cluster/m1 not found`,
			`member cluster "m1": no bearer token: Secret karmada-cluster/m1 not found`},
		{"a key that is not a token", "tokenFile=/var/run/secrets/token tokens:3 Kind:Secret",
			"tokenFile=/var/run/secrets/token tokens:3 Kind:Secret"},
		{"RBAC error", `secrets "member1" is forbidden: User "system:serviceaccount:karmada-system:karmada-controller-manager" cannot get resource "secrets" in API group "" in the namespace "karmada-cluster"`,
			`secrets "member1" is forbidden: User "system:serviceaccount:karmada-system:karmada-controller-manager" cannot get resource "secrets" in API group "" in the namespace "karmada-cluster"`},
		{"base64 without a token key", "checksum ZGF0YTp7Y2FCdW5kbGU6Y2F9 for member1",
			"checksum ZGF0YTp7Y2FCdW5kbGU6Y2F9 for member1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact(tt.text, nil)
			if got != tt.want {
				t.Errorf("redact(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
			assertNoLeak(t, tok, got)
			assertNoLeak(t, oddToken, got)
		})
	}
}

// TestRedactByKeyInASecretPrintedWithPercentV: a cache or webhook that
// prints the whole Secret object (%v, %+v) leaks neither the token nor the
// name of the object it is about.
func TestRedactByKeyInASecretPrintedWithPercentV(t *testing.T) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Namespace: "karmada-cluster"},
		Data:       map[string][]byte{"caBundle": []byte("ca"), SecretTokenKey: []byte(oddToken)},
	}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		text := redact(fmt.Sprintf("conversion failed for "+verb, secret), nil)
		for name, form := range allForms(oddToken) {
			if strings.Contains(text, form) {
				t.Errorf("%s: form %s of the token leaked: %q", verb, name, text)
			}
		}
		if !strings.Contains(text, "member1") || !strings.Contains(text, redacted) {
			t.Errorf("%s: %q, want the Secret's name kept and its token redacted", verb, text)
		}
	}
}
