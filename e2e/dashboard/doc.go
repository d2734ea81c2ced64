// Package dashboard checks holdfast's Grafana dashboard
// (docs/dashboards/holdfast.json) against a real scrape of a running
// binary: every metric a query of the dashboard selects for that binary,
// and every label it groups by, matches on or names in a legend, is in
// the binary's /metrics.
//
// internal/pipeline/charts' unit tests check the same queries against what
// the code registers, read from its source; this reads what a patched
// binary actually serves, so a name the build or an upstream registry
// changes (a prefix, a label renamed by a wrapper) is caught too. The
// suites call Check where they already scrape a patched binary
// (e2e/karmadacp, e2e/worker); the parsing and matching live here, untagged,
// so that `make unit` tests them.
package dashboard
