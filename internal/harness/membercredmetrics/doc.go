// Package membercredmetrics reads the membercred counters (pkg/membercred)
// a patched Karmada binary serves on its Prometheus /metrics endpoint: per
// member cluster, how often the credential Secret was read (refreshes),
// how many member 401s came, how many a replay with the re-read token hid
// (recovered) and how many reached the caller (persisted).
//
// It lives under internal/, not e2e/, because both the rotation suite
// (e2e/karmada) and the control-plane harness (internal/harness/karmadacp,
// which scrapes each component's counters) read them, and internal/ must not
// import e2e/. Parsing is prometheus/common's text parser; the package only
// adds the sums and differences the suites report.
package membercredmetrics
