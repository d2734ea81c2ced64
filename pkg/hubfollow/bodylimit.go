package hubfollow

import (
	"errors"
	"io"
	"net/http"

	"k8s.io/client-go/transport"
)

// maxProbeResponseBytes caps what a probe reads from a hub. A genuine Cluster
// object is bounded by etcd's 1.5 MiB request limit; 4 MiB leaves room for
// JSON re-encoding while keeping a misbehaving endpoint from making the
// worker buffer an unbounded body every poll.
const maxProbeResponseBytes = 4 << 20

// errResponseTooLarge marks a response cut off at the cap; the probe reports
// it as malformed.
var errResponseTooLarge = errors.New("hub response exceeds the size limit")

// limitResponseBody returns a transport.WrapperFunc for rest.Config.Wrap that
// fails a read once a response body passes max bytes. client-go has no such
// option: its rest client reads a whole body with io.ReadAll.
func limitResponseBody(max int64) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &limitedBodyRoundTripper{rt: rt, max: max}
	}
}

type limitedBodyRoundTripper struct {
	rt  http.RoundTripper
	max int64
}

func (l *limitedBodyRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, remaining: l.max}
	return resp, nil
}

// WrappedRoundTripper lets client-go unwrap the chain (utilnet.RoundTripperWrapper).
func (l *limitedBodyRoundTripper) WrappedRoundTripper() http.RoundTripper { return l.rt }

type limitedBody struct {
	io.ReadCloser
	remaining int64 // bytes still allowed; negative once the cap is passed
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.remaining < 0 {
		return 0, errResponseTooLarge
	}
	// Read one byte past the cap so a body of exactly max bytes still ends
	// with io.EOF rather than an error.
	if int64(len(p)) > b.remaining+1 {
		p = p[:b.remaining+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.remaining -= int64(n)
	if b.remaining < 0 {
		return n, errResponseTooLarge
	}
	return n, err
}
