package worker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// metricSamples is one scrape of a Prometheus text exposition: the value of
// each series, keyed by the series exactly as the exposition spells it,
// e.g. `kubeslice_worker_hub_active{hub="primary"}`. client_golang writes
// labels sorted by name, so a key written that way matches.
type metricSamples map[string]float64

// parseMetrics reads the text exposition format. Comment lines, blank lines
// and lines it cannot read are skipped: the suite asks for a handful of
// series and a missing one is reported by the caller, naming the series.
func parseMetrics(r io.Reader) (metricSamples, error) {
	samples := metricSamples{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // long label sets (Go runtime histograms) exceed bufio's 64 KiB default
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// The value follows the last space outside the label set; a label
		// value may hold spaces, so split after the closing brace if any.
		rest := line
		series := ""
		if i := strings.LastIndex(line, "}"); i >= 0 {
			series, rest = line[:i+1], strings.TrimSpace(line[i+1:])
		} else {
			var ok bool
			series, rest, ok = strings.Cut(line, " ")
			if !ok {
				continue
			}
		}
		fields := strings.Fields(rest) // value [timestamp]
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		samples[series] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the metrics exposition: %w", err)
	}
	return samples, nil
}

// value returns the series' value and whether the exposition had it.
func (m metricSamples) value(series string) (float64, bool) {
	v, ok := m[series]
	return v, ok
}

// withPrefix returns the series whose name starts with prefix.
func (m metricSamples) withPrefix(prefix string) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// scrapeMetrics fetches http://addr/metrics once.
func scrapeMetrics(ctx context.Context, addr string) (metricSamples, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a loopback scrape; longer means the worker is wedged
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping the worker's metrics at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping the worker's metrics at %s: HTTP %d", addr, resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}
