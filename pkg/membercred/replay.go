package membercred

import (
	"fmt"
	"io"
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"
)

// maxDrainBytes bounds how much of a 401 body is read before it is closed
// ahead of a replay. An API server's 401 is a Status object of a few hundred
// bytes; draining it lets the connection be reused, and anything larger is
// not worth reading just to save a connection.
const maxDrainBytes = 4 << 10

// withAuthorization returns a copy of req carrying value as Authorization.
// The caller's request is never mutated, as http.RoundTripper requires.
//
// It copies like utilnet.CloneRequest (what client-go's bearer round tripper
// uses: shallow request, deep header), but lays all header values, the new
// one included, in ONE backing array capped per key, as http.Header.Clone
// does. That is three allocations whatever the header count, instead of one
// per header plus one for Set; this runs on every request an informer makes.
func withAuthorization(req *http.Request, value string) *http.Request {
	r := new(http.Request)
	*r = *req
	n := 1
	for _, vv := range req.Header {
		n += len(vv)
	}
	values := make([]string, n)
	h := make(http.Header, len(req.Header)+1)
	for k, vv := range req.Header {
		c := copy(values, vv)
		h[k] = values[:c:c] // capped: an append elsewhere reallocates, never shares
		values = values[c:]
	}
	values[0] = value
	h["Authorization"] = values[:1:1]
	r.Header = h
	return r
}

// replayable returns a request that can be sent again after req was sent
// once, or false. A request without body (every GET, LIST and WATCH) can be
// replayed as it is; one with a body only if GetBody can produce it again
// (http.NewRequest sets it for in-memory bodies, as client-go's requests
// are). Protocol upgrades (exec, attach, port-forward) are never replayed:
// upgrade round trippers keep per-request connection state.
func replayable(req *http.Request) (*http.Request, bool) {
	if req.Header.Get("Upgrade") != "" {
		return nil, false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	r := req.WithContext(req.Context()) // a shallow copy sharing the header, replaced by withAuthorization
	r.Body = body
	return r, true
}

// discard drains a little of resp's body and closes it, before a replay
// takes its place.
func discard(resp *http.Response) {
	if resp.Body == nil { // only a hand-written inner round tripper does this
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainBytes))
	_ = resp.Body.Close()
}

// closeRequestBody honours http.RoundTripper's contract ("RoundTrip must
// always close the body, including on errors") for a request that is
// refused without being sent.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// tryCancelRequest passes CancelRequest down a wrapped chain, as client-go's
// round trippers do (its helper is unexported).
func tryCancelRequest(rt http.RoundTripper, req *http.Request) {
	type canceler interface{ CancelRequest(*http.Request) }
	switch rt := rt.(type) {
	case canceler:
		rt.CancelRequest(req)
	case utilnet.RoundTripperWrapper:
		tryCancelRequest(rt.WrappedRoundTripper(), req)
	default:
		klog.FromContext(req.Context()).Info("Warning: unable to cancel request", "roundTripperType", fmt.Sprintf("%T", rt))
	}
}

// bearerOf returns the token an Authorization header carries, or "".
func bearerOf(req *http.Request) string {
	const prefix = "Bearer "
	v := req.Header.Get("Authorization")
	if len(v) > len(prefix) && v[:len(prefix)] == prefix {
		return v[len(prefix):]
	}
	return ""
}
