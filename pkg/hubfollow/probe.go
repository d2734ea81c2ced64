package hubfollow

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// ProbeKind classifies what one read of one hub's Cluster CR produced.
type ProbeKind int

const (
	// ProbeClaim: the hub published a usable status.activeController.
	ProbeClaim ProbeKind = iota + 1
	// ProbeNoClaim: the CR exists but declares nothing (every non-HA hub).
	ProbeNoClaim
	// ProbeUnreachable: no answer (refused, reset, TLS failure, 5xx, ...).
	ProbeUnreachable
	// ProbeTimeout: no answer within the resolve timeout.
	ProbeTimeout
	// ProbeUnauthorized: the hub rejected this worker's token (401).
	ProbeUnauthorized
	// ProbeForbidden: the token authenticated but may not read the CR (403).
	ProbeForbidden
	// ProbeNotFound: no Cluster CR for this worker on that hub.
	ProbeNotFound
	// ProbeMalformed: the hub answered with something not usable as a claim.
	ProbeMalformed
	// ProbeCredentialUnavailable: the token or CA file for that hub could not
	// be loaded, so no request was sent.
	ProbeCredentialUnavailable
)

// String is the kind's metric label value (reason="...") and log value.
func (k ProbeKind) String() string {
	switch k {
	case ProbeClaim:
		return "claim"
	case ProbeNoClaim:
		return "no_claim"
	case ProbeUnreachable:
		return "unreachable"
	case ProbeTimeout:
		return "timeout"
	case ProbeUnauthorized:
		return "unauthorized"
	case ProbeForbidden:
		return "forbidden"
	case ProbeNotFound:
		return "not_found"
	case ProbeMalformed:
		return "malformed"
	case ProbeCredentialUnavailable:
		return "credential_unavailable"
	default:
		return fmt.Sprintf("ProbeKind(%d)", int(k))
	}
}

// failed reports whether the kind counts as a probe error. Publishing nothing
// is not an error: it is what every non-HA hub looks like.
func (k ProbeKind) failed() bool {
	return k != ProbeClaim && k != ProbeNoClaim
}

// credentialAccepted says what the probe proved about this worker's
// credential for the hub. known is false when the request never reached the
// hub's authentication (unreachable, timeout), so nothing was learned.
func (k ProbeKind) credentialAccepted() (accepted, known bool) {
	switch k {
	case ProbeClaim, ProbeNoClaim, ProbeNotFound, ProbeMalformed:
		// Each is an authenticated, authorized answer (the API server
		// authorizes a GET before it looks the object up).
		return true, true
	case ProbeUnauthorized, ProbeForbidden, ProbeCredentialUnavailable:
		return false, true
	default:
		return false, false
	}
}

// ProbeResult is the outcome of one read of one hub.
type ProbeResult struct {
	// Hub is the slot read, PrimaryName or SecondaryName.
	Hub  string
	Kind ProbeKind
	// Claim is set when Kind is ProbeClaim.
	Claim Claim
	// Err says what went wrong for a failed kind; it names the hub and the
	// Cluster CR and never carries a credential.
	Err error
}

// Prober reads status.activeController from this worker's Cluster CR on one
// hub, with that hub's own credential. Its client is built on the first probe
// and kept; if building fails (a token or CA file not mounted yet) the next
// probe tries again, so a credential provisioned after start is picked up.
type Prober struct {
	conn            Connection
	namespace, name string // of the Cluster CR
	timeout         time.Duration
	// newClient is rest.UnversionedRESTClientFor; tests count calls.
	newClient func(*rest.Config) (*rest.RESTClient, error)

	mu     sync.Mutex
	client *rest.RESTClient
}

// Where the Cluster CR lives: controller.kubeslice.io/v1alpha1, resource
// clusters, namespaced in the hub's project namespace.
const (
	clusterGroup    = "controller.kubeslice.io"
	clusterVersion  = "v1alpha1"
	clusterResource = "clusters"
)

// NewProber returns a prober of the Cluster CR namespace/clusterName on the
// hub conn. Every read is bounded by timeout, both through the request
// context and through the HTTP client's own Timeout, so an API server that
// accepts a connection and never answers cannot hold a probe.
func NewProber(conn Connection, namespace, clusterName string, timeout time.Duration) *Prober {
	return &Prober{
		conn:      conn,
		namespace: namespace,
		name:      clusterName,
		timeout:   timeout,
		newClient: rest.UnversionedRESTClientFor,
	}
}

// Probe reads the hub once and classifies the answer. It returns within the
// prober's timeout (plus scheduling slack) whatever the hub does.
func (p *Prober) Probe(ctx context.Context) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	client, err := p.restClient()
	if err != nil {
		return ProbeResult{Hub: p.conn.Name, Kind: ProbeCredentialUnavailable,
			Err: fmt.Errorf("hub %s: cannot build a client from %s and %s: %w", p.conn, p.conn.TokenFile, p.conn.CAFile, err)}
	}
	result := client.Get().
		AbsPath("/apis", clusterGroup, clusterVersion, "namespaces", p.namespace, clusterResource, p.name).
		Do(ctx)
	body, err := result.Raw()
	if err != nil {
		// Error() decodes a Status body into a richer message when there is one.
		err = result.Error()
		sep := ": "
		if err.Error() == "" {
			sep = ""
		}
		return ProbeResult{Hub: p.conn.Name, Kind: classifyReadError(err),
			Err: fmt.Errorf("reading %s on hub %s: %s%s%w", p.object(), p.conn, httpStatus(err), sep, err)}
	}
	claim, ok, err := decodeClaim(body)
	switch {
	case err != nil:
		return ProbeResult{Hub: p.conn.Name, Kind: ProbeMalformed,
			Err: fmt.Errorf("%s on hub %s: %w", p.object(), p.conn, err)}
	case !ok:
		return ProbeResult{Hub: p.conn.Name, Kind: ProbeNoClaim}
	default:
		return ProbeResult{Hub: p.conn.Name, Kind: ProbeClaim, Claim: claim}
	}
}

func (p *Prober) object() string {
	return "Cluster " + p.namespace + "/" + p.name
}

// restClient builds the client once. The lock is held while building, which
// reads two small local files; probes of one hub never run concurrently in
// the follower anyway.
func (p *Prober) restClient() (*rest.RESTClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		return p.client, nil
	}
	client, err := p.newClient(probeRESTConfig(p.conn, p.timeout))
	if err != nil {
		return nil, err
	}
	p.client = client
	return client, nil
}

// probeRESTConfig is the hub's own ClientConfig (same endpoint, token file and
// CA file the worker would connect with, the CA file followed the same way, so
// a probe also proves the credential) plus the bounds a probe needs.
func probeRESTConfig(conn Connection, timeout time.Duration) *rest.Config {
	cfg := conn.ClientConfig()
	cfg.Timeout = timeout
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	// Only decodes error Status bodies; the Cluster's claim is read from the
	// raw body by decodeClaim.
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	cfg.Wrap(limitResponseBody(maxProbeResponseBytes))
	// Lets a hub's audit log tell the follower's polls from the worker's work.
	rest.AddUserAgent(cfg, "hubfollow")
	return cfg
}

// httpStatus names the HTTP answer behind err ("401 Unauthorized"), or says
// there was none; a Status body without a message would otherwise leave the
// error text empty.
func httpStatus(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code != 0 {
		code := int(status.Status().Code)
		return fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	}
	return "no HTTP answer"
}

// classifyReadError maps a failed GET to a kind.
func classifyReadError(err error) ProbeKind {
	var netErr net.Error
	switch {
	case errors.Is(err, errResponseTooLarge):
		return ProbeMalformed
	case apierrors.IsUnauthorized(err):
		return ProbeUnauthorized
	case apierrors.IsForbidden(err):
		return ProbeForbidden
	case apierrors.IsNotFound(err):
		return ProbeNotFound
	case errors.Is(err, context.DeadlineExceeded),
		apierrors.IsTimeout(err), apierrors.IsServerTimeout(err),
		errors.As(err, &netErr) && netErr.Timeout():
		return ProbeTimeout
	default:
		return ProbeUnreachable
	}
}
