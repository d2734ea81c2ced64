// This go.mod only fences tests/ off from holdfast's own module: the
// regression tests in tests/<upstream>/ compile inside upstream trees (they
// test upstream packages), never in this repository. holdfast apply copies
// tests/<upstream>/ into both the patched tree and its pristine twin, so the
// same test shows RED on pristine and GREEN on patched.
module github.com/holdfast-dist/holdfast/tests

go 1.25.0
