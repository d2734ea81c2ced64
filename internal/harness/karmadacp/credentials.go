package karmadacp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
)

// MemberCredential scrapes component c's /metrics (MetricsURL) and returns
// its membercred counters for member cluster cluster. served is false, with
// no error, when c has no metrics URL (nothing to scrape: the aggregated
// API server, or a component not started) or serves no membercred series
// for cluster (a pristine binary, or one that has not built a client for
// it yet). A failed scrape is an error naming the component.
//
// http URLs are read as they are: controller-runtime serves them
// unauthenticated on 127.0.0.1. https URLs are the aggregated servers'
// secure ports (karmada-search, karmada-metrics-adapter), where /metrics
// goes through delegated authentication and authorization: they are read
// with karmada-apiserver's admin credential (system:masters, which may GET
// every non-resource URL), trusting only the control plane's CA, which
// signs the components' serving certificates.
func (cp *ControlPlane) MemberCredential(ctx context.Context, c Component, cluster string) (counters membercredmetrics.MemberCredential, served bool, err error) {
	u := cp.MetricsURL(c)
	if u == "" {
		return counters, false, nil
	}
	var admin *rest.Config
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme == "https" {
		admin = cp.API.AdminConfig()
	}
	counters, served, err = scrapeMemberCredential(ctx, u, cluster, admin, cp.pki.caCert)
	if err != nil {
		return counters, false, fmt.Errorf("%s of control plane %s: membercred counters of %s: %w", c, cp.opts.Name, cluster, err)
	}
	return counters, served, nil
}

// scrapeMemberCredential is MemberCredential for one URL; admin and ca are
// read only for https.
func scrapeMemberCredential(ctx context.Context, u, cluster string, admin *rest.Config, ca []byte) (membercredmetrics.MemberCredential, bool, error) {
	m, err := scrapeMetrics(ctx, u, admin, ca)
	if err != nil {
		return membercredmetrics.MemberCredential{}, false, err
	}
	return m.MemberCredential(cluster), m.HasMemberCredential(cluster), nil
}

// Metrics scrapes component c's /metrics once, as MemberCredential does,
// for a caller that reads many members' counters: one scrape instead of
// one per member (the scale scenario reads a hundred). A component with
// no metrics URL gives nil and no error.
func (cp *ControlPlane) Metrics(ctx context.Context, c Component) (membercredmetrics.Metrics, error) {
	u := cp.MetricsURL(c)
	if u == "" {
		return nil, nil
	}
	var admin *rest.Config
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme == "https" {
		admin = cp.API.AdminConfig()
	}
	m, err := scrapeMetrics(ctx, u, admin, cp.pki.caCert)
	if err != nil {
		return nil, fmt.Errorf("%s of control plane %s: scraping %s: %w", c, cp.opts.Name, u, err)
	}
	return m, nil
}

func scrapeMetrics(ctx context.Context, u string, admin *rest.Config, ca []byte) (membercredmetrics.Metrics, error) {
	client, err := metricsClient(u, admin, ca)
	if err != nil {
		return nil, err
	}
	return membercredmetrics.Scrape(ctx, client, u)
}

// metricsClient is the client for metrics endpoint u: the default one for
// http; for https, admin's credential (bearer token, client certificate,
// whichever it carries) over TLS verified against ca alone. client-go's
// rest.TransportFor builds it, so the credential is sent exactly as the
// admin's API clients send it.
func metricsClient(u string, admin *rest.Config, ca []byte) (*http.Client, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return nil, fmt.Errorf("metrics URL %q: %w", u, err)
	}
	switch parsed.Scheme {
	case "http":
		return http.DefaultClient, nil
	case "https":
	default:
		return nil, fmt.Errorf("metrics URL %q: scheme %q, want http or https", u, parsed.Scheme)
	}
	if admin == nil {
		return nil, fmt.Errorf("metrics URL %s: no admin credential to authenticate with", u)
	}
	if len(ca) == 0 {
		return nil, fmt.Errorf("metrics URL %s: no CA to verify the serving certificate with", u)
	}
	cfg := rest.CopyConfig(admin)
	// Only the control plane's CA: the admin config trusts
	// karmada-apiserver's own, which signs no component's certificate.
	cfg.TLSClientConfig.CAData = slices.Clone(ca)
	cfg.TLSClientConfig.CAFile = ""
	cfg.TLSClientConfig.Insecure = false
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics URL %s: %w", u, err)
	}
	return &http.Client{Transport: rt}, nil
}

// MetricsComponents are the components that have a metrics URL: those of
// Components in their start order, then any other (started by a scenario
// of its own) by name.
func (cp *ControlPlane) MetricsComponents() []Component {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var out, others []Component
	for _, c := range Components {
		if cp.urls[c] != "" {
			out = append(out, c)
		}
	}
	for c, u := range cp.urls {
		if u != "" && !slices.Contains(Components, c) {
			others = append(others, c)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}
