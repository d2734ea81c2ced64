package hubfollow

import (
	"strings"
	"testing"
)

// Valid JSON that is not an object is named by its type; a body that is not
// JSON at all keeps the decoder's reason, rather than being named by its
// first character.
func TestDecodeClaimNamesWhatIsNotAnObject(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`[]`, "not a JSON object: got an array"},
		{`"hub"`, "not a JSON object: got a string"},
		{`<html>hub</html>`, "not a JSON object: invalid character '<'"},
	} {
		_, ok, err := decodeClaim([]byte(tc.body))
		if ok || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("decodeClaim(%s): ok %v, err %v; want an error starting %q", tc.body, ok, err, tc.want)
		}
	}
}

// The limits are inclusive: a value of exactly the limit is accepted, one
// byte more is refused.
func TestBoundedStringLimitIsInclusive(t *testing.T) {
	const max = 16
	exact := strings.Repeat("a", max)
	if s, err := boundedString([]byte(`"`+exact+`"`), "endpoint", max); err != nil || s != exact {
		t.Errorf("value of exactly %d bytes: %q, %v; want it accepted", max, s, err)
	}
	if _, err := boundedString([]byte(`"`+exact+`a"`), "endpoint", max); err == nil {
		t.Errorf("value of %d bytes accepted with a %d-byte limit", max+1, max)
	}
}
