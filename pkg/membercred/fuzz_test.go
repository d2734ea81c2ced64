package membercred

import (
	"bytes"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
)

// FuzzSecretToken feeds arbitrary Secret contents through the parser and a
// whole token source. Beyond "never panics", it proves errors cannot leak
// the Secret's bytes: every failure message must equal the message produced
// for a fixed, canonical input of the same reason, so it cannot depend on
// the data at all.
func FuzzSecretToken(f *testing.F) {
	f.Add("token", []byte("eyJhbGciOiJSUzI1NiJ9.e30.sig"), false)
	f.Add("token", []byte(" tok\n"), false)
	f.Add("token", []byte(""), false)
	f.Add("token", []byte("\t\r\n "), false)
	f.Add("token", []byte("a\x00b"), false)
	f.Add("token", []byte("in side"), false)
	f.Add("token", []byte("\xff\xfe"), false)
	f.Add("caBundle", []byte("abc"), false)
	f.Add("token", []byte("abc"), true)

	canonical := map[string]*corev1.Secret{
		ReasonMissingKey:   {},
		ReasonEmptyToken:   {Data: map[string][]byte{SecretTokenKey: nil}},
		ReasonInvalidToken: {Data: map[string][]byte{SecretTokenKey: []byte("a b")}},
	}
	canonicalDetail := map[string]string{}
	canonicalErr := map[string]string{}
	for reason, secret := range canonical {
		_, got, detail := tokenFromSecret(secret, nil)
		if got != reason {
			f.Fatalf("canonical input for %s parsed as %q", reason, got)
		}
		canonicalDetail[reason] = detail
		_, err := fuzzSource(secret).Token()
		canonicalErr[reason] = err.Error()
	}

	f.Fuzz(func(t *testing.T, key string, value []byte, nilData bool) {
		secret := &corev1.Secret{Data: map[string][]byte{key: value, "caBundle": value}}
		if nilData {
			secret.Data = nil
		}
		token, reason, detail := tokenFromSecret(secret, nil)
		if reason == "" {
			if key != SecretTokenKey || nilData || token != string(bytes.TrimSpace(value)) || token == "" {
				t.Fatalf("accepted token %q from key %q (nil data %v), want the trimmed %q value", token, key, nilData, SecretTokenKey)
			}
		} else if token != "" || detail != canonicalDetail[reason] {
			t.Fatalf("reason %s: token %q, detail %q; want no token and detail %q", reason, token, detail, canonicalDetail[reason])
		}

		src := fuzzSource(secret)
		tok, err := src.Token()
		switch {
		case reason == "" && (err != nil || tok.AccessToken != token):
			t.Fatalf("source: %v, %v; want token %q", tok, err, token)
		case reason != "" && (err == nil || err.Error() != canonicalErr[reason]):
			t.Fatalf("source error %q, want %q", fmtErr(err), canonicalErr[reason])
		case reason != "" && src.Health().LastError != canonicalDetail[reason]:
			t.Fatalf("Health().LastError = %q, want %q", src.Health().LastError, canonicalDetail[reason])
		}
	})
}

func fuzzSource(secret *corev1.Secret) *SecretTokenSource {
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "fuzz", Namespace: "ns", Name: "secret", Logger: funcr.New(func(string, string) {}, funcr.Options{}),
		Getter: func(string, string) (*corev1.Secret, error) { return secret, nil },
	})
	if err != nil {
		panic(err)
	}
	return src
}
