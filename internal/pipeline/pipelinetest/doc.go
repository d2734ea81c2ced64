// Package pipelinetest builds a miniature holdfast repository and upstream
// for tests of the pipeline and the rebase report: a synthetic upstream
// module served at several versions through a file:// GOPROXY
// (internal/modproxytest), a carried library, an overlay glue file, a
// one-patch series and a regression test that fails on the pristine source
// and passes on the patched one — the Karmada arrangement in a few lines.
package pipelinetest
