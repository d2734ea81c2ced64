// Package rebase tries a patch series on an upstream version that is not
// (yet) pinned and reports, patch by patch, what a person must do before
// the pin can move: nothing (applies cleanly), refresh it (applies only with
// an offset), fix it (conflicts, naming file and hunk), or drop it (already
// upstream: it reverse-applies to the new pristine source).
//
// It lays the same tree the apply step would (pristine source verified
// against the checksum the go command reports, carried libraries, overlay)
// in a temporary folder and classifies each patch with
// internal/pipeline/patchset, in series order, so later patches see the earlier
// ones applied. Whether upstream fixed the bug in another way is a question for
// the regression test on the pristine tree; Options.PristineCheck is where the
// build and test step plugs that in.
package rebase
