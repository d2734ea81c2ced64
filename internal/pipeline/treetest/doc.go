// Package treetest runs the go tests that decide whether a patch series is
// right for a pin, and reports them as RED/GREEN.
//
// On the patched tree it runs, in one `go test -json`, the upstream tests of
// every package a patch touches (derived from the diffs, so a new patch needs
// no list to be kept up to date), the tests of the carried libraries
// (third_party/holdfast/...) and the packages holding holdfast's regression
// tests (tests/NAME). On the pristine twin it runs only the regression tests,
// by name: they must fail there (RED) and pass on the patched tree (GREEN).
// A regression test that passes on pristine means upstream fixed the bug (or
// the test no longer shows it): the patch is no longer needed, and the report
// says so as a failure that needs a person, not as a silent success.
//
// It draws on internal/pipeline/patchset (the diffs), internal/pipeline/carry
// (where libraries go) and the go command's test2json event stream, which names
// every test and package outcome, so no output is scraped.
package treetest
