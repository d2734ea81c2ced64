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
