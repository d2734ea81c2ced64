package membercred

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
)

// forms returns the ways an error can quote a token: as it is, JSON-quoted
// (a Status message echoing an object) and base64 (Secret data serialised).
func forms(token string) []string {
	quoted, _ := json.Marshal(token)
	return []string{
		token,
		string(quoted),
		base64.StdEncoding.EncodeToString([]byte(token)),
		base64.RawStdEncoding.EncodeToString([]byte(token)),
		base64.URLEncoding.EncodeToString([]byte(token)),
	}
}

// TestGetterErrorQuotingTheSecretIsRedacted: a getter error or panic value
// that echoes the Secret (a conversion webhook quoting the object, a cache
// that prints what it holds) must not carry any token value seen in the
// Secret into Health, the error or the log.
func TestGetterErrorQuotingTheSecretIsRedacted(t *testing.T) {
	const (
		initial = "initial-token-0123456789"
		current = "current-token-9876543210"
	)
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a2FybWFkYTptZW1iZXIifQ.c2lnbmF0dXJl"
	echo := func(tok string) string {
		b64 := base64.StdEncoding.EncodeToString([]byte(tok))
		return fmt.Sprintf(`conversion webhook failed for {"data":{"token":%q},"raw":%q}`, b64, tok)
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
			return func(string, string) (*corev1.Secret, error) { return nil, errors.New(echo(jwt)) }
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
// token never reaches Health, the error or the log in any of its forms.
func FuzzGetterErrorRedaction(f *testing.F) {
	f.Add("tok-0123456789abcdef", "before %s after", uint8(0))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "%s", uint8(1))
	f.Add("abcdef.0123456789abcdef", "webhook: {\"token\":\"%s\"}", uint8(2))
	f.Add("x", "%s%s", uint8(3))
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
		form := forms(token)[int(mode)%len(forms(token))]
		msg := strings.ReplaceAll(template, "%s", form)
		if !strings.Contains(msg, form) {
			msg += form
		}
		var lines []string
		logger := funcr.New(func(prefix, args string) { lines = append(lines, prefix+args) }, funcr.Options{Verbosity: 10})
		var getter SecretGetter
		initial := ""
		switch mode % 3 {
		case 0: // the token was read before
			initial = token
			getter = func(string, string) (*corev1.Secret, error) { return nil, errors.New(msg) }
		case 1: // the Secret returned with the error holds it
			getter = func(string, string) (*corev1.Secret, error) {
				return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(token)}}, errors.New(msg)
			}
		default: // a panic value quotes a token read before
			initial = token
			getter = func(string, string) (*corev1.Secret, error) { panic(msg) }
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
		texts := append(lines, h.LastError, fmtErr(h.Err()), fmtErr(tokErr))
		for _, f := range forms(token) {
			for _, text := range texts {
				if strings.Contains(text, f) {
					t.Fatalf("token form %q leaked into %q", f, text)
				}
			}
		}
	})
}
