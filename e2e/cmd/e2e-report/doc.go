// Command e2e-report merges the per-suite reports the end-to-end suites
// write (_output/reports/e2e/<suite>.json) into _output/reports/e2e.md and
// _output/reports/e2e.json, and draws beside them the timings of each
// rotation scenario per build (e2e-timeline-*.svg, which e2e.md links).
//
// `make e2e` runs it after the suites whatever their outcome, so a failed
// run still leaves a readable report; it exits non-zero only when it cannot
// write the report, or with -strict when a scenario did not show the
// expected result.
package main
