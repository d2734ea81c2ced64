package membercred

import (
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/httpstream"
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
// does: a fixed handful of allocations (the request, one values array, the
// header map sized once; TestAuthRoundTripAllocations pins the total)
// instead of one per header plus one for Set, and this runs on every
// request an informer makes.
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

// replayable returns a request that can be sent again through next after
// req was sent through it once and answered 401, or false.
//
// Whether a round tripper may carry a second request is a property of the
// innermost one: client-go's SPDY and WebSocket round trippers keep the
// connection of the one request they were built for, and a replay dials a
// second connection and orphans the first. That cannot be seen through a
// wrapper that does not say what it wraps (Karmada's proxyHeaderRoundTripper,
// which BuildClusterConfig installs for spec.proxyURL with proxyHeader, is
// one), and the request does not reliably say it: the SPDY round tripper
// adds its Upgrade header below every wrapper, and the negotiation headers
// client-go's callers add above it are a convention, not a contract. So
// instead of guessing whether an unknown round tripper is single-use, a
// request is replayed only when it
// does not ask for an upgrade, its body can be produced again, and either
// the chain is proven reusable or the request is one net/http itself sends
// again on a fresh connection:
//
//   - every LIST and WATCH is a GET, so informers keep their replay through
//     any chain, the proxy-header one included;
//   - every upgrade client-go makes over SPDY (exec, attach, port-forward) is
//     a POST, so none is replayed through a chain that hides its innermost
//     round tripper, even one whose caller adds none of the headers
//     upgradeRequest knows;
//   - a create or update (POST, PUT, PATCH with GetBody) is replayed when
//     the chain ends in *http.Transport; through a hidden chain it gets its
//     401, and the next request carries the token the 401 made us read.
//
// A 401 means the API server did not act on the request (authentication
// runs first), so the method only matters for what the transport can do,
// not for what the server did.
func replayable(req *http.Request, next http.RoundTripper) (*http.Request, bool) {
	if upgradeRequest(req) {
		return nil, false
	}
	switch classifyChain(next) {
	case chainSingleUse:
		return nil, false
	case chainHidden:
		if !idempotentMethod(req.Method) {
			return nil, false
		}
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

// upgradeRequest reports whether req asks for a protocol upgrade as seen
// above the round tripper that performs it: Upgrade and Connection: Upgrade
// when the caller sets them itself (an upgrade through *http.Transport),
// X-Stream-Protocol-Version, which client-go's spdy.Negotiate adds before
// sending, and Sec-WebSocket-Protocol, which its websocket.Negotiate does.
func upgradeRequest(req *http.Request) bool {
	h := req.Header
	return h.Get(httpstream.HeaderUpgrade) != "" ||
		httpstream.IsUpgradeRequest(req) ||
		len(h[http.CanonicalHeaderKey(httpstream.HeaderProtocolVersion)]) != 0 ||
		len(h[http.CanonicalHeaderKey("Sec-WebSocket-Protocol")]) != 0
}

// idempotentMethod is net/http's own rule for re-sending a request on a new
// connection (http.Request.isReplayable, without its Idempotency-Key
// exception, which no Kubernetes client sets).
func idempotentMethod(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace: // "" means GET
		return true
	}
	return false
}

// chainKind is what a chain of round trippers is known to be.
type chainKind int

const (
	// chainHidden: the walk stopped at a round tripper that is neither
	// *http.Transport nor says what it wraps; it may be single-use.
	chainHidden chainKind = iota
	// chainReusable: the chain ends in *http.Transport, which sends any
	// request with a re-obtainable body again on a pooled or new connection.
	chainReusable
	// chainSingleUse: the chain holds one of client-go's upgrade round
	// trippers.
	chainSingleUse
)

// maxChainDepth bounds a walk down WrappedRoundTripper() against a cycle;
// client-go's chains are a handful deep.
const maxChainDepth = 64

// classifyChain walks rt through WrappedRoundTripper(). SPDY's round tripper
// implements httpstream.UpgradeRoundTripper; the WebSocket one
// (k8s.io/client-go/transport/websocket, not imported so that this package
// does not pull in a WebSocket library) is recognised by DataBufferSize.
func classifyChain(rt http.RoundTripper) chainKind {
	for range maxChainDepth {
		switch rt.(type) {
		case *http.Transport:
			return chainReusable
		case httpstream.UpgradeRoundTripper, interface{ DataBufferSize() int }:
			return chainSingleUse
		}
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			return chainHidden
		}
		rt = w.WrappedRoundTripper()
	}
	return chainHidden
}

// unauthorizedOutcome is told how a replay after a 401 ended: both
// credentials (the member token, the kubeconfig's) count and log it alike.
type unauthorizedOutcome interface {
	notePersisted401() // the replay got a 401 again
	noteRecovered()    // the replay got any other answer
}

// replayWithFresh ends a 401's handling once a re-read gave a credential
// other than the rejected one: req, when replayable, is sent once more to
// next with header as its Authorization (none when header is empty: a
// client certificate authenticates) and its answer returned in place of
// resp; otherwise resp is returned as it came, and the next request carries
// the fresh credential.
func replayWithFresh(next http.RoundTripper, req *http.Request, resp *http.Response, header string, o unauthorizedOutcome) (*http.Response, error) {
	replay, ok := replayable(req, next)
	if !ok {
		return resp, nil
	}
	discard(resp)
	if header != "" {
		replay = withAuthorization(replay, header)
	}
	resp, err := next.RoundTrip(replay)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		o.notePersisted401()
		return resp, nil
	}
	o.noteRecovered()
	return resp, nil
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
