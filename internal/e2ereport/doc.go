// Package e2ereport records what the end-to-end suites showed and renders
// it for people and programs.
//
// It is the contract between the suites (e2e/), which write the per-suite
// files, the e2e-report command, which merges them into e2e.json and
// e2e.md, and the release gate (internal/pipeline/release), which reads
// e2e.json and refuses a report with an unmet scenario or of another commit. It
// lives under internal/ so that the release gate builds without any suite:
// nothing under internal/ may import e2e/ (internal/layering).
//
// Each suite's TestMain holds a Recorder, adds one Scenario per scenario and
// binary (the patched build, and the pristine upstream build where the suite
// reproduces the bug the patch fixes), and flushes it to
// _output/reports/e2e/<suite>.json. The suites run as separate test
// binaries, possibly in parallel, so they never share a file; the
// e2e-report command merges the per-suite files afterwards into one
// Markdown table per suite plus a JSON document of the same content, and
// a timeline of each rotation scenario's events per build (Timelines,
// drawn with internal/svgchart).
//
// A scenario's Result is what the binary showed and Expected what Catalog
// requires of it (the suites do not choose it; a row whose Expected is not
// the catalogue's is unmet). A pristine binary is expected to be red ("red-as-expected"):
// if it passes, the suite no longer reproduces the bug and proves nothing
// about the patch, so that row counts as unmet like any failure. A control
// row expects a pristine binary to pass: it measures upstream's own
// behaviour, against which a patched row is compared.
package e2ereport
