package membercred

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
)

// forms returns every way an error can quote a token that redaction
// promises to remove (see allForms), in a fixed order.
func forms(token string) []string {
	f := allForms(token)
	return []string{f["raw"], f["json"], f["go"], f["std"], f["rawstd"], f["url"], f["rawurl"], f["bytes"]}
}

// keyForms returns ways an error can quote an object holding token under a
// token key: JSON (also of base64 data, inside a quoted string and itself
// base64-encoded), Go's %v, %+v and %#v of maps and structs, the String()
// of a Secret, key=value.
func keyForms(token string) []string {
	data := map[string][]byte{"caBundle": []byte("ca"), SecretTokenKey: []byte(token)}
	strData := map[string]string{"caBundle": "ca", SecretTokenKey: token}
	quoted, _ := json.Marshal(token)
	b64, _ := json.Marshal(base64.StdEncoding.EncodeToString([]byte(token)))
	obj := `{"data":{"token":` + string(quoted) + `},"metadata":{"name":"member1"}}`
	secret := &corev1.Secret{Data: data}
	secret.Name = "member1"
	type creds struct{ Name, Token string }
	return []string{
		obj,
		`{"data":{"token":` + string(b64) + `}}`,
		strconv.Quote(obj),
		base64.StdEncoding.EncodeToString([]byte(obj)),
		base64.RawURLEncoding.EncodeToString([]byte(obj)),
		fmt.Sprintf("%v", data),
		fmt.Sprintf("%v", strData),
		fmt.Sprintf("%#v", data),
		fmt.Sprintf("%#v", strData),
		fmt.Sprintf("%+v", creds{"member1", token}),
		fmt.Sprintf("%#v", creds{"member1", token}),
		fmt.Sprintf("%v", secret),
		"token=" + strconv.Quote(token),
	}
}

// TestGetterErrorQuotingTheSecretIsRedacted: a getter error or panic value
// that echoes the Secret (a conversion webhook quoting the object, a cache
// that prints what it holds) must not carry any token value seen in the
// Secret into Health, the error or the log.
func TestGetterErrorQuotingTheSecretIsRedacted(t *testing.T) {
	const (
		initial = initialToken
		current = currentToken
	)
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a2FybWFkYTptZW1iZXIifQ.c2lnbmF0dXJl"
	// Every form, none under a token key (which would hide a dropped form).
	echo := func(tok string) string {
		return "conversion webhook failed for member1: " + strings.Join(forms(tok), " ; ")
	}
	tests := []struct {
		name   string
		getter func(st *secretStore) SecretGetter
		leaked []string
	}{
		{"error echoes the Secret returned with it", func(st *secretStore) SecretGetter {
			return func(string, string) (*corev1.Secret, error) {
				return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(current)}}, errors.New(echo(current))
			}
		}, []string{current}},
		{"error echoes a token read earlier", func(st *secretStore) SecretGetter {
			return func(string, string) (*corev1.Secret, error) { return nil, errors.New(echo(initial)) }
		}, []string{initial}},
		{"panic value echoes a token read earlier", func(st *secretStore) SecretGetter {
			return func(string, string) (*corev1.Secret, error) { panic(echo(initial)) }
		}, []string{initial}},
		{"error quotes a ServiceAccount token never read", func(st *secretStore) SecretGetter {
			// Found by its shape, which the byte list does not keep.
			return func(string, string) (*corev1.Secret, error) {
				return nil, errors.New("conversion webhook failed for member1: " + strings.Join(forms(jwt)[:7], " ; "))
			}
		}, []string{jwt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAPIServer(t) // rejects everything: every request forces a read
			logs := &logLines{}
			st := &secretStore{}
			src, err := NewSecretTokenSource(SecretTokenSourceOptions{
				Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
				Getter: tt.getter(st), InitialToken: initial, Logger: logs.logger(),
			})
			if err != nil {
				t.Fatal(err)
			}
			get(t, client(srv, src), srv.URL)
			waitFor(t, "the forced read", func() bool { return src.Health().LastError != "" })

			h := src.Health()
			texts := append(logs.all(), h.LastError, fmtErr(h.Err()))
			for _, leaked := range tt.leaked {
				for _, form := range forms(leaked) {
					assertNoLeak(t, form, texts...)
				}
			}
			if !strings.Contains(h.LastError, "[redacted]") {
				t.Errorf("LastError = %q, want the quoted token replaced by [redacted]", h.LastError)
			}
		})
	}
}

// FuzzGetterErrorRedaction: whatever an error or panic value says around a
// token the source has seen (or that is returned beside the error), the
// token never reaches Health, the error or the log in any of its forms; nor
// does a token never seen that the text quotes under a token key.
func FuzzGetterErrorRedaction(f *testing.F) {
	f.Add("tok-0123456789abcdef", "before %s after", uint8(0))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "%s", uint8(1))
	f.Add("abcdef.0123456789abcdef", "webhook: {\"token\":\"%s\"}", uint8(2))
	f.Add("x", "%s%s", uint8(3))
	f.Add(oddToken, "conversion webhook: bad object %s", uint8(3))
	f.Add(initialToken, "cache: %s.", uint8(7))
	f.Add("static]token}", "(%s)", uint8(23))
	f.Add("s3cr3t,token", "%s", uint8(27))
	f.Fuzz(func(t *testing.T, token, template string, mode uint8) {
		token, reason := normalizeToken([]byte(token))
		if reason != "" || len(token) < 8 { // shorter values are not tokens an API server issues
			return
		}
		// Printable text only: the log sink escapes control bytes (\x00),
		// and an escape followed by digits can spell a token that the
		// message itself never held.
		template = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == '\\' {
				return '?'
			}
			return r
		}, template)
		var form string
		if mode%4 == 3 { // never seen: known only by its key
			form = keyForms(token)[int(mode/4)%len(keyForms(token))]
		} else {
			form = forms(token)[int(mode/4)%len(forms(token))]
		}
		msg := strings.ReplaceAll(template, "%s", form)
		if !strings.Contains(msg, form) {
			msg += form
		}
		run := func(msg string) []string {
			var lines []string
			logger := funcr.New(func(prefix, args string) { lines = append(lines, prefix+args) }, funcr.Options{Verbosity: 10})
			var getter SecretGetter
			initial := ""
			switch mode % 4 {
			case 0: // the token was read before
				initial = token
				getter = func(string, string) (*corev1.Secret, error) { return nil, errors.New(msg) }
			case 1: // the Secret returned with the error holds it
				getter = func(string, string) (*corev1.Secret, error) {
					return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(token)}}, errors.New(msg)
				}
			case 2: // a panic value quotes a token read before
				initial = token
				getter = func(string, string) (*corev1.Secret, error) { panic(msg) }
			default: // the first read fails quoting a token never read
				getter = func(string, string) (*corev1.Secret, error) { return nil, errors.New(msg) }
			}
			src, err := NewSecretTokenSource(SecretTokenSourceOptions{
				Cluster: "fuzz", Namespace: "ns", Name: "secret", Getter: getter, InitialToken: initial, Logger: logger,
			})
			if err != nil {
				t.Fatal(err)
			}
			var tokErr error
			if initial == "" {
				_, tokErr = src.Token()
			} else {
				_, _ = src.tokenAfterUnauthorized(context.Background(), src.current.Load())
			}
			h := src.Health()
			return append(lines, h.LastError, fmtErr(h.Err()), fmtErr(tokErr))
		}
		if mode%4 == 3 {
			// A token never seen is found by its key only: skip input whose
			// text around the object spells the token by itself.
			for _, text := range run(strings.ReplaceAll(template, "%s", "")) {
				for _, f := range forms(token) {
					if strings.Contains(text, f) {
						return
					}
				}
			}
		}
		for _, text := range run(msg) {
			for _, f := range forms(token) {
				if strings.Contains(text, f) {
					t.Fatalf("token form %q leaked into %q", f, text)
				}
			}
		}
	})
}
