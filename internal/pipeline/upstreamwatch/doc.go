// Package upstreamwatch is the scheduled half of a rebase: it asks the
// module proxy which tags each upstream in pins.txt has published since the
// pins, tries the patch series on each with internal/pipeline/rebase, and
// writes one report (Markdown for the pull request, JSON for scripts).
//
// Which tags are tried is decided per minor, newest tag of the minor only
// (see Select): a newer patch release of a pinned minor, and the newest
// release of each minor above the newest pin. Older unpinned minors are
// ones holdfast dropped or never carried and are left out; pre-releases
// only when asked for. The tag list comes from the go command, under the
// same checksum-database checks as every download (pristine.Downloader).
//
// A watch that finds work has done its job: a conflicting tag is a line in
// the report, not an error. Errors are for tags the watch could not try.
package upstreamwatch
