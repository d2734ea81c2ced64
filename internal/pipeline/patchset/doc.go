// Package patchset reads holdfast patch files and applies them to a tree
// strictly: zero fuzz, every context line must match, and by default at the
// exact line the hunk states.
//
// A patch file is a header a person can read and a tool can check (DEP-3 and
// EKS Distro style: Subject, Why, Upstream-Issue, Upstream-PR,
// Applied-Upstream, Drop-When, Holdfast-Fix), a line holding only "---", and
// a unified diff in git format. The diff is parsed with
// github.com/bluekeyes/go-gitdiff; application is done here rather than with
// that library's Apply because the pipeline needs more than pass/fail: the
// rebase report must say where a hunk's context was found when it moved
// (offset), whether a patch reverse-applies (already upstream), and for a
// conflict which hunk failed and which line it expected. Application never
// searches for a moved hunk unless asked to (Options.Offset), and never
// ignores a context line.
package patchset
