// Package release assembles a holdfast release folder from what the earlier
// steps of `make release` produced: binaries, images, charts, SBOMs, the
// upstream-test and end-to-end reports. It writes the release notes (every
// carried patch with its upstream issue, PR, status and drop-when, read from
// the series headers) and CHECKSUMS (sha256 of every file, in the format
// `sha256sum -c` reads).
//
// Assemble is the last gate before publication, so it refuses rather than
// guesses: a dirty checkout, a release folder that already exists, a test
// report that is not RED on pristine and GREEN on patched, an end-to-end
// scenario that did not end as expected, or an artifact built from another
// commit. The folder is staged beside the destination and renamed into
// place last, so a failure never leaves a half-written release.
package release
