package membercred

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/transport"
)

// WrapTransport puts the kubeconfig's current bearer token on every request
// that does not already carry an Authorization header, and answers a 401 as
// SecretTokenSource.WrapTransport does: the files are read at once (single
// flight, rate-limited, bounded) and, when that gives another credential
// (token or client certificate) and the request is replayable, the request
// is sent once more with it. Install adds it; use it directly only on a
// config whose BearerToken is empty.
func (k *KubeconfigCredential) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &kubeconfigRoundTripper{cred: k, next: rt, singleUse: singleUseTransport(rt)}
}

var _ transport.WrapperFunc = (*KubeconfigCredential)(nil).WrapTransport

type kubeconfigRoundTripper struct {
	cred      *KubeconfigCredential
	next      http.RoundTripper
	singleUse bool
}

var _ utilnet.RoundTripperWrapper = (*kubeconfigRoundTripper)(nil)

func (rt *kubeconfigRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return rt.next.RoundTrip(req)
	}
	k := rt.cred
	k.maybeCheck()
	sent := k.current.Load()
	resp, err := rt.next.RoundTrip(sent.authorize(req))
	if err != nil {
		if upgradeUnauthorized(err) || tlsRejected(err) {
			// Nothing to replay (an upgrade, or a request that may have
			// been sent before the alert came), but the next request
			// should carry what the file holds now.
			k.startForcedRead(sent)
		}
		return nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized {
		k.noteAccepted()
		return resp, nil
	}
	return rt.onUnauthorized(req, sent, resp)
}

func (rt *kubeconfigRoundTripper) onUnauthorized(req *http.Request, sent *kubeconfigSnapshot, resp *http.Response) (*http.Response, error) {
	k := rt.cred
	k.metrics.unauthorized(k.name)
	if rt.singleUse || upgradeRequest(req) {
		k.startForcedRead(sent)
		return resp, nil
	}
	fresh, err := k.afterRejection(req.Context(), sent)
	if err != nil {
		return resp, nil // nothing is known about the files; the 401 intact
	}
	if fresh == sent {
		k.notePersisted401()
		return resp, nil
	}
	return replayWithFresh(rt.next, req, resp, fresh.header, k)
}

func (rt *kubeconfigRoundTripper) CancelRequest(req *http.Request) { tryCancelRequest(rt.next, req) }

func (rt *kubeconfigRoundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

// authorize returns req with the snapshot's token, or req itself when the
// kubeconfig holds none (a client certificate authenticates).
func (s *kubeconfigSnapshot) authorize(req *http.Request) *http.Request {
	if s.header == "" {
		return req
	}
	return withAuthorization(req, s.header)
}

// tlsRejected reports whether the server ended the handshake with an alert
// (crypto/tls reports it as a net.OpError "remote error"): an expired or
// revoked client certificate, among other causes. A read costs little and
// is rate-limited, so the cause is not told apart.
func tlsRejected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// tlsWrapped is the transport wrapTLS last made, for the base it was made
// from: clients built from equal configs share client-go's cached base
// transport and so share one pool here, as they do upstream.
type tlsWrapped struct {
	base *http.Transport
	host string
	rt   http.RoundTripper
}

// wrapTLS returns a copy of rt's *http.Transport whose client certificate
// is the one the kubeconfig holds now (crypto/tls asks GetClientCertificate
// on every handshake, before Certificates) and whose connections are
// tracked so that a new certificate closes them. With a followed CA, the
// copy goes through caTrust.wrap, which verifies each handshake against the
// current CA; without one (system roots, or verification skipped) it is
// only re-pooled and tracked. Any other round tripper (client-go's upgrade
// round trippers build their own TLS from the config) is returned as it is.
func (k *KubeconfigCredential) wrapTLS(rt http.RoundTripper, host string) http.RoundTripper {
	base, ok := rt.(*http.Transport)
	if !ok || base.TLSClientConfig == nil {
		return rt
	}
	k.tlsMu.Lock()
	defer k.tlsMu.Unlock()
	if w := k.tlsLast; w.base == base && w.host == host {
		return w.rt
	}
	mine := base.Clone()
	mine.TLSClientConfig.GetClientCertificate = k.clientCertificate
	var out http.RoundTripper
	if k.trust != nil && !mine.TLSClientConfig.InsecureSkipVerify {
		out = k.trust.wrap(mine, host)
	} else {
		out = repooled(mine, base, k.tracker)
	}
	k.tlsLast = tlsWrapped{base: base, host: host, rt: out}
	return out
}

func (k *KubeconfigCredential) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if c := k.current.Load().cert; c != nil {
		return c, nil
	}
	return &tls.Certificate{}, nil // none: crypto/tls sends no certificate
}
