package membercred

import (
	"encoding/base64"
	"testing"
)

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

// TestRedactTokenKeysAtTheEnd: a token key that ends the text, or is
// followed by spaces only, has no value to redact, and one followed by
// backslashes only has them as its value;
// neither makes the scan read past the end.
func TestRedactTokenKeysAtTheEnd(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"refused the token=", "refused the token="},
		{"refused the token:", "refused the token:"},
		{"refused the token:   ", "refused the token:   "},
		{`refused the token:\\`, "refused the token:" + redacted},
	} {
		if got := redactTokenKeys(tc.text); got != tc.want {
			t.Errorf("redactTokenKeys(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestRedactTokenKeysEmptyValues: an empty list is the whole value, and a
// quoted key followed at once by the end of its object has none; what
// follows is left as it is.
func TestRedactTokenKeysEmptyValues(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"token:[] and more", "token:" + redacted + " and more"},
		{"token:[]uint8{} and more", "token:" + redacted + " and more"},
		{`{"token":} and more`, `{"token":} and more`},
	} {
		if got := redactTokenKeys(tc.text); got != tc.want {
			t.Errorf("redactTokenKeys(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestRedactTokenKeysUnterminatedQuote: a quoted value cut off by the end
// of the text (a truncated error message) is redacted to the end.
func TestRedactTokenKeysUnterminatedQuote(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"token":"abc123`, `{"token":"` + redacted},
		{`{"token":"abc\"12`, `{"token":"` + redacted},
		{`{\"token\":\"abc123`, `{\"token\":\"` + redacted},
	} {
		if got := redactTokenKeys(tc.text); got != tc.want {
			t.Errorf("redactTokenKeys(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestRedactTokenKeysQuotedTwice: JSON quoted inside a string (level 1)
// ends its value at the quote carrying one backslash, keeping what
// follows; a value that ends in a lone backslash runs to the end.
func TestRedactTokenKeysQuotedTwice(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{\"token\":\"abc123\",\"kind\":\"Secret\"}`, `{\"token\":\"` + redacted + `\",\"kind\":\"Secret\"}`},
		{`{\"token\":\"abc\`, `{\"token\":\"` + redacted},
		{`{\"token\":\"ab\\\"c\",\"kind\":1}`, `{\"token\":\"` + redacted + `\",\"kind\":1}`},
	} {
		if got := redactTokenKeys(tc.text); got != tc.want {
			t.Errorf("redactTokenKeys(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestRedactEncodedTokenKeysWithAStrayLastCharacter: an encoded object with
// a token key is found when one character of the text around it runs into
// its end.
func TestRedactEncodedTokenKeysWithAStrayLastCharacter(t *testing.T) {
	enc := base64.RawStdEncoding.EncodeToString([]byte(`{"token":"abc"}`)) // 20 characters
	if got, want := redactEncodedTokenKeys("data "+enc+"x end"), "data "+redacted+" end"; got != want {
		t.Errorf("redactEncodedTokenKeys = %q, want %q", got, want)
	}
}
