package membercred

import "testing"

// TestNormalizeTokenVisibleASCIIBounds: '!' (0x21) and '~' (0x7e), the
// ends of visible ASCII, are token characters; space and DEL just outside
// are not.
func TestNormalizeTokenVisibleASCIIBounds(t *testing.T) {
	for _, tc := range []struct{ raw, token, reason string }{
		{"!tok~", "!tok~", ""},
		{"~", "~", ""},
		{"!", "!", ""},
		{"to k", "", ReasonInvalidToken},
		{"tok\x7f", "", ReasonInvalidToken},
	} {
		token, reason := normalizeToken([]byte(tc.raw))
		if token != tc.token || reason != tc.reason {
			t.Errorf("normalizeToken(%q) = %q, %q; want %q, %q", tc.raw, token, reason, tc.token, tc.reason)
		}
	}
}

// TestRedactTokenKeysLooksPastProse: a token key that reads as prose
// ("token: expired") is left as it is, and a real entry after it is still
// redacted.
func TestRedactTokenKeysLooksPastProse(t *testing.T) {
	got := redactTokenKeys("token: expired; retried with token:abc123")
	if want := "token: expired; retried with token:" + redacted; got != want {
		t.Errorf("redactTokenKeys = %q, want %q", got, want)
	}
}
