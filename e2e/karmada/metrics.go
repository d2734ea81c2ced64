package karmada

import (
	"context"

	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
)

// The metrics readers live in internal/harness/membercredmetrics, which
// internal/harness/karmadacp shares; these names keep the suite's callers as
// they were.

// Metric families the patched controller-manager serves (pkg/membercred).
const (
	MemberUnauthorizedPersisted = membercredmetrics.UnauthorizedPersisted
	MemberUnauthorizedRecovered = membercredmetrics.UnauthorizedRecovered
	MemberUnauthorized          = membercredmetrics.Unauthorized
	MemberRefreshes             = membercredmetrics.Refreshes
	MemberRefreshFailures       = membercredmetrics.RefreshFailures
	OwnGuardTripped             = membercredmetrics.OwnGuardTripped
)

type (
	// Metrics is one scrape of a Prometheus text endpoint.
	Metrics = membercredmetrics.Metrics
	// MemberCredential is one member cluster's membercred counters.
	MemberCredential = membercredmetrics.MemberCredential
)

// ScrapeMetrics reads url (a controller-runtime metrics endpoint: plain
// HTTP on 127.0.0.1).
func ScrapeMetrics(ctx context.Context, url string) (Metrics, error) {
	return membercredmetrics.Scrape(ctx, nil, url)
}
