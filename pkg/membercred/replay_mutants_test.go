package membercred

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestWithAuthorizationSizesTheHeaderOnce: the copy of a request with its
// Authorization set costs the request, one backing array of values, and a
// header map made at its final size: exactly what a map made with room for
// every header costs, whatever the header count. A map sized too small grows
// once it fills, and costs more.
func TestWithAuthorizationSizesTheHeaderOnce(t *testing.T) {
	for n := 0; n <= 20; n++ {
		req, err := http.NewRequest(http.MethodGet, "https://member.example.com/api", nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"Authorization"}
		for i := range n {
			keys = append(keys, fmt.Sprintf("X-Header-%d", i))
			req.Header.Set(keys[i+1], "v")
		}
		sink := map[string]http.Header{}
		mapAllocs := testing.AllocsPerRun(50, func() {
			h := make(http.Header, len(keys))
			for _, k := range keys {
				h[k] = nil
			}
			sink["h"] = h
		})
		var out *http.Request
		allocs := testing.AllocsPerRun(50, func() { out = withAuthorization(req, "Bearer t") })
		if allocs != 2+mapAllocs || out.Header.Get("Authorization") != "Bearer t" || len(out.Header) != n+1 {
			t.Errorf("%d headers: %v allocations, Authorization %q, %d headers; want %v (2 + a map of %d made at its size), Bearer t, %d",
				n, allocs, out.Header.Get("Authorization"), len(out.Header), 2+mapAllocs, n+1, n+1)
		}
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestDiscardClosesTheBody: the 401 a replay replaces is drained and
// closed, so its connection goes back to the pool.
func TestDiscardClosesTheBody(t *testing.T) {
	body := &closeRecorder{Reader: strings.NewReader(unauthorizedBody)}
	discard(&http.Response{Body: body})
	if !body.closed {
		t.Error("discard left the body open")
	}
	discard(&http.Response{}) // no body: nothing to do, no panic
}

func TestBearerOf(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"", ""},
		{"Bearer", ""},
		{"Bearer ", ""},
		{"Bearer tok", "tok"},
		{"Basic dXNlcjpwYXNz", ""},
	} {
		req := &http.Request{Header: http.Header{}}
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		if got := bearerOf(req); got != tc.want {
			t.Errorf("bearerOf(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}
