package membercred

import (
	"net/http"
	"sync/atomic"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// BenchmarkCAHandshake compares what a NEW connection costs (dial, TLS
// handshake, one request) with (a) client-go's static CAData and (b) the
// bundle the Secret holds (TrustSecretCABundle), against the same local
// server; idle connections are dropped after every request so each
// iteration handshakes. Requests on an established connection cost the
// same in both: (b) adds nothing per request (see BenchmarkAuthRoundTrip,
// whose variants do not change).
func BenchmarkCAHandshake(b *testing.B) {
	ca := newTestCA(b, "bench", nil)
	m := newTLSMember(b, ca.serving(b, leafOpts{}), false)
	st := newCASecretStore("tok", ca.pem())
	src := newCASource(b, st)

	static := &rest.Config{Host: m.URL, BearerToken: "tok", TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem()}}
	variants := []struct {
		name string
		cfg  *rest.Config
	}{
		{"a=client-go-static-CAData", static},
		{"b=membercred-secret-bundle", memberConfig(b, src, st, m.URL)},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) { benchNewConnections(b, v.cfg, m.URL, &m.accepted) })
	}
}

// benchNewConnections measures one request on a new connection to url per
// iteration with a client of cfg: idle connections are dropped after every
// request, and accepted (the server's count of accepted connections) proves
// that each iteration handshook.
func benchNewConnections(b *testing.B, cfg *rest.Config, url string, accepted *atomic.Int64) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := &http.Client{Transport: rt}
	base := innermostTransport(b, rt)
	before := accepted.Load()
	b.ReportAllocs()
	for b.Loop() {
		if err := fetchOK(c, url); err != nil {
			b.Fatal(err)
		}
		base.CloseIdleConnections()
	}
	if got := accepted.Load() - before; got < int64(b.N) {
		b.Fatalf("%d connections for %d requests: not every iteration handshook", got, b.N)
	}
}

// innermostTransport unwraps rt to the *http.Transport that holds its
// connections.
func innermostTransport(tb testing.TB, rt http.RoundTripper) *http.Transport {
	tb.Helper()
	for {
		switch r := rt.(type) {
		case *http.Transport:
			return r
		case utilnet.RoundTripperWrapper:
			rt = r.WrappedRoundTripper()
		default:
			tb.Fatalf("cannot unwrap %T", rt)
		}
	}
}
