package membercredmetrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric families a patched binary serves (pkg/membercred).
const (
	// UnauthorizedPersisted counts member 401s that survived a re-read of
	// the Secret: the Secret holds a token the member rejects.
	UnauthorizedPersisted = "holdfast_member_credential_unauthorized_persisted_total"
	// UnauthorizedRecovered counts member 401s hidden from the caller by
	// one replay with a token freshly read from the Secret.
	UnauthorizedRecovered = "holdfast_member_credential_unauthorized_recovered_total"
	// Unauthorized counts every member 401.
	Unauthorized = "holdfast_member_credential_unauthorized_total"
	// Refreshes counts reads of the Secret that yielded a token, and
	// RefreshFailures (per reason) those that did not.
	Refreshes       = "holdfast_member_credential_refreshes_total"
	RefreshFailures = "holdfast_member_credential_refresh_failures_total"
	// LastRefresh is when a member's token was last confirmed from its
	// Secret (a gauge); a token source sets it when it is created.
	LastRefresh = "holdfast_member_credential_last_refresh_timestamp_seconds"
	// OwnGuardTripped counts the own-credential guard's actions.
	OwnGuardTripped = "holdfast_own_credential_guard_tripped_total"
)

// memberFamilies are the per-cluster counters MemberCredential reads.
var memberFamilies = []string{Unauthorized, UnauthorizedRecovered, UnauthorizedPersisted, Refreshes, RefreshFailures}

// Metrics is one scrape of a Prometheus text endpoint.
type Metrics map[string]*dto.MetricFamily

// Parse parses the Prometheus text exposition format.
func Parse(r io.Reader) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	return Metrics(families), nil
}

// Scrape reads url with client (nil: http.DefaultClient, for the plain
// HTTP endpoints controller-runtime serves on 127.0.0.1). An answer other
// than 200 is an error naming the URL and the status.
func Scrape(ctx context.Context, client *http.Client, url string) (Metrics, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scraping %s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	m, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	return m, nil
}

// Sum adds up the counter, gauge or untyped samples of family name whose
// labels include every pair of match; a missing family sums to 0, which is
// what a counter that never counted looks like.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	var sum float64
	for _, metric := range m.series(name, match) {
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

func (m Metrics) series(name string, match map[string]string) []*dto.Metric {
	family, ok := m[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, metric := range family.GetMetric() {
		if hasLabels(metric, match) {
			out = append(out, metric)
		}
	}
	return out
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

// HasMemberCredential reports whether the scrape has any membercred series
// of cluster: the counters, or the LastRefresh gauge a token source sets
// when it is created (a counter vector shows a label value only once it
// counted, and a source created with the Secret's token counts nothing
// until a re-read). A pristine binary never has one; a patched one has
// none only for a cluster it has not built a client for.
func (m Metrics) HasMemberCredential(cluster string) bool {
	match := map[string]string{"cluster": cluster}
	for _, f := range append(slices.Clone(memberFamilies), LastRefresh) {
		if len(m.series(f, match)) > 0 {
			return true
		}
	}
	return false
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
		Unauthorized:    m.Sum(Unauthorized, match),
		Recovered:       m.Sum(UnauthorizedRecovered, match),
		Persisted:       m.Sum(UnauthorizedPersisted, match),
		Refreshes:       m.Sum(Refreshes, match),
		RefreshFailures: m.Sum(RefreshFailures, match),
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

// Change names c as a difference (from Sub), signed, in the order the
// report lists per binary: "refreshes +1, unauthorized +0, recovered +0,
// persisted +0". Refresh failures are added only when there were any: a
// Secret that could not be read is the exception worth a word.
func (c MemberCredential) Change() string {
	s := fmt.Sprintf("refreshes %+g, unauthorized %+g, recovered %+g, persisted %+g", c.Refreshes, c.Unauthorized, c.Recovered, c.Persisted)
	if c.RefreshFailures != 0 {
		s += fmt.Sprintf(", refresh failures %+g", c.RefreshFailures)
	}
	return s
}

// LastRefreshed reads cluster's LastRefresh gauge: when its token was
// last confirmed from the Secret (or the source created), so when the
// source's next periodic re-read is due, one refresh period later. false
// when the scrape has no such series.
func (m Metrics) LastRefreshed(cluster string) (time.Time, bool) {
	series := m.series(LastRefresh, map[string]string{"cluster": cluster})
	if len(series) == 0 {
		return time.Time{}, false
	}
	var latest float64
	for _, s := range series {
		latest = max(latest, s.GetGauge().GetValue())
	}
	sec, frac := math.Modf(latest)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))), true
}
