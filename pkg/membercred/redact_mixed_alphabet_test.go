package membercred

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestRedactBase64BehindTheOtherAlphabet: a standard-alphabet encoding of a
// token object that holds '+' or '/' and stands right after characters of
// the URL alphabet ("key_…") forms one base64Run with them, which decodes in
// neither alphabet as a whole; the token must still be scrubbed. The mirror
// case (a URL-alphabet encoding behind '+' or '/') too.
func TestRedactBase64BehindTheOtherAlphabet(t *testing.T) {
	// Tokens whose encodings hold both alphabet-specific characters.
	var std, url string
	for _, tok := range []string{"never-read->>>???~~~", "x?~>>?~>", "a>?b~>?c~>"} {
		js := `{"data":{"token":"` + tok + `"}}`
		if e := base64.RawStdEncoding.EncodeToString([]byte(js)); std == "" && strings.ContainsAny(e, "+/") {
			std = e
		}
		if e := base64.RawURLEncoding.EncodeToString([]byte(js)); url == "" && strings.ContainsAny(e, "-_") {
			url = e
		}
	}
	if std == "" || url == "" {
		t.Fatal("no test token whose encodings use the alphabet-specific characters")
	}
	for _, c := range []struct{ name, text, secret string }{
		{"standard behind key_", "conversion webhook: bad object key_" + std + " in Secret karmada-cluster/member1", std},
		{"standard behind a-b-", "bad object a-b-" + std, std},
		{"standard behind ab-cd_ef", "bad object ab-cd_ef" + std + "==", std},
		{"URL behind a+b/", "bad object a+b/" + url, url},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := redact(c.text, nil)
			if strings.Contains(got, c.secret) {
				t.Errorf("encoded token object left in %q", got)
			}
			if !strings.Contains(got, "bad object") {
				t.Errorf("redaction lost the message: %q", got)
			}
		})
	}
}
