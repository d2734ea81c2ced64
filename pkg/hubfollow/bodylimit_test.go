package hubfollow

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A body of exactly the cap is read to io.EOF, even when the EOF comes in a
// read of its own (as strings.Reader gives it); one byte more fails.
func TestLimitedBodyCapIsInclusive(t *testing.T) {
	const body = "12345"
	got, err := io.ReadAll(&limitedBody{ReadCloser: io.NopCloser(strings.NewReader(body)), remaining: int64(len(body))})
	if err != nil || string(got) != body {
		t.Errorf("body of exactly the cap: %q, %v; want %q, nil", got, err, body)
	}
	_, err = io.ReadAll(&limitedBody{ReadCloser: io.NopCloser(strings.NewReader(body + "6")), remaining: int64(len(body))})
	if !errors.Is(err, errResponseTooLarge) {
		t.Errorf("body one byte over the cap: err = %v, want %v", err, errResponseTooLarge)
	}
}

// A buffer no longer than what the cap still allows is used as it is.
func TestLimitedBodyExactBuffer(t *testing.T) {
	b := &limitedBody{ReadCloser: io.NopCloser(strings.NewReader("12345")), remaining: 5}
	buf := make([]byte, 5)
	n, err := b.Read(buf)
	if n != 5 || err != nil || string(buf) != "12345" {
		t.Errorf("Read into a 5-byte buffer with 5 bytes allowed: %d, %v, %q", n, err, buf)
	}
}
