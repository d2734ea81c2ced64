package karmada

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric families the patched controller-manager serves (pkg/membercred).
const (
	// MemberUnauthorizedPersisted counts member 401s that survived a
	// re-read of the Secret: the Secret holds a token the member rejects.
	MemberUnauthorizedPersisted = "holdfast_member_credential_unauthorized_persisted_total"
	// MemberUnauthorizedRecovered counts member 401s hidden from the caller
	// by one replay with a token freshly read from the Secret.
	MemberUnauthorizedRecovered = "holdfast_member_credential_unauthorized_recovered_total"
	// MemberUnauthorized counts every member 401.
	MemberUnauthorized = "holdfast_member_credential_unauthorized_total"
	// MemberRefreshes counts reads of the Secret that yielded a token, and
	// MemberRefreshFailures (per reason) those that did not.
	MemberRefreshes       = "holdfast_member_credential_refreshes_total"
	MemberRefreshFailures = "holdfast_member_credential_refresh_failures_total"
	// OwnGuardTripped counts the own-credential guard's actions.
	OwnGuardTripped = "holdfast_own_credential_guard_tripped_total"
)

// Metrics is one scrape of a Prometheus text endpoint.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses the Prometheus text exposition format.
func ParseMetrics(r io.Reader) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	return Metrics(families), nil
}

// ScrapeMetrics reads url (a controller-runtime metrics endpoint: plain
// HTTP on 127.0.0.1).
func ScrapeMetrics(ctx context.Context, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	m, err := ParseMetrics(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	return m, nil
}

// Sum adds up the counter, gauge or untyped samples of family name whose
// labels include every pair of match; a missing family sums to 0, which is
// what a counter that never counted looks like.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	family, ok := m[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, metric := range family.GetMetric() {
		if !hasLabels(metric, match) {
			continue
		}
		switch {
		case metric.Counter != nil:
			sum += metric.GetCounter().GetValue()
		case metric.Gauge != nil:
			sum += metric.GetGauge().GetValue()
		case metric.Untyped != nil:
			sum += metric.GetUntyped().GetValue()
		}
	}
	return sum
}

func hasLabels(metric *dto.Metric, match map[string]string) bool {
	found := 0
	for _, pair := range metric.GetLabel() {
		if want, ok := match[pair.GetName()]; ok {
			if pair.GetValue() != want {
				return false
			}
			found++
		}
	}
	return found == len(match)
}

// MemberCredential is one member cluster's membercred counters at one
// scrape; Sub gives what happened between two.
type MemberCredential struct {
	Unauthorized, Recovered, Persisted, Refreshes, RefreshFailures float64
}

// MemberCredential reads cluster's counters (all reasons of the failures
// summed). A binary without membercred reads as all zero.
func (m Metrics) MemberCredential(cluster string) MemberCredential {
	match := map[string]string{"cluster": cluster}
	return MemberCredential{
		Unauthorized:    m.Sum(MemberUnauthorized, match),
		Recovered:       m.Sum(MemberUnauthorizedRecovered, match),
		Persisted:       m.Sum(MemberUnauthorizedPersisted, match),
		Refreshes:       m.Sum(MemberRefreshes, match),
		RefreshFailures: m.Sum(MemberRefreshFailures, match),
	}
}

// Sub returns c minus before.
func (c MemberCredential) Sub(before MemberCredential) MemberCredential {
	return MemberCredential{
		Unauthorized:    c.Unauthorized - before.Unauthorized,
		Recovered:       c.Recovered - before.Recovered,
		Persisted:       c.Persisted - before.Persisted,
		Refreshes:       c.Refreshes - before.Refreshes,
		RefreshFailures: c.RefreshFailures - before.RefreshFailures,
	}
}

// String names the counters as the report quotes them.
func (c MemberCredential) String() string {
	return fmt.Sprintf("unauthorized %v, recovered %v, persisted %v, refreshes %v, refresh failures %v",
		c.Unauthorized, c.Recovered, c.Persisted, c.Refreshes, c.RefreshFailures)
}
