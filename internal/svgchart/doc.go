// Package svgchart draws the reports' pictures as small, self-contained SVG
// files with the standard library only: a line chart (the scale curves of
// e2e/scale), a chart of horizontal bars in lanes, and a timeline of events
// in tracks on one time axis (a rotation scenario's rotation, first failure
// and recovery per build, internal/e2ereport).
//
// The output is deterministic, the same input giving the same bytes, so a
// report's SVG can be diffed and kept beside its Markdown. Every drawn value
// also sits in the SVG as text, a data-* attribute and a <title> per point,
// bar or event, so that a test (or a reader with a text editor) checks the picture
// against the report's figures instead of trusting the geometry. Values that
// cannot be drawn (NaN, ±Inf, a series with no point) are errors; names are
// escaped, so any text gives a well-formed document.
//
// It is a shared leaf (docs/layout.md): internal/e2ereport imports it, and
// e2e/scale; it imports nothing of holdfast.
package svgchart
