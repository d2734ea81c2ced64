package rebase

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
)

// Regression is the verdict of holdfast's regression tests on the pristine
// tree of the target version, as the caller's PristineCheck reported it.
type Regression string

const (
	RegressionNotRun Regression = "not run"
	// RegressionPasses: the pristine tree behaves as the patched one.
	RegressionPasses Regression = "passes on pristine"
	// RegressionFails: the pristine tree still shows the bug, as the
	// regression tests define it (for Karmada's member-credential-rotation:
	// a caller sees the first 401 after a revocation).
	RegressionFails Regression = "fails on pristine"
)

// UpstreamFix is what the report says about a patch whose fix upstream has
// shipped its own version of.
type UpstreamFix string

const (
	// FixSuperseded: upstream has the fix and the regression tests pass on
	// pristine: drop the patch (with its glue and tests).
	FixSuperseded UpstreamFix = "upstream fix present; carried patch superseded"
	// FixWeaker: upstream has a fix, but the regression tests still fail
	// on pristine: keep carrying the patch, now as an enhancement of
	// upstream's fix.
	FixWeaker UpstreamFix = "upstream fix present but weaker; carried as enhancement"
	// FixUnverified: the headers say upstream has the fix; without the
	// regression verdict the report cannot say which of the above holds.
	FixUnverified UpstreamFix = "upstream fix present per headers"
)

// ClassifyUpstreamFix is the decision rule of docs/release.md ("When
// upstream ships its own fix"). Upstream contains the fix per the headers
// when version >= Applied-Upstream, or when Upstream-Backport names a tag
// of version's minor (a semantic version after the URL) and version >= that
// tag. Then the regression verdict decides: passes -> FixSuperseded, fails
// -> FixWeaker, not run -> FixUnverified. A patch whose headers do not place
// the fix in version but that names a backport with no tag is superseded
// when the regression tests pass (the backport is evidently in the tag),
// and unclassified otherwise: a failing test cannot tell a tag without the
// backport from a weaker backport. Every other patch gets "" (the carried
// patch is the only fix), whatever the verdict: a passing test with no
// header evidence is reported for the series, not pinned on a patch.
func ClassifyUpstreamFix(h patchset.Header, version string, reg Regression) (UpstreamFix, string) {
	var evidence string
	if a := h.AppliedUpstream; a != "" && a != "no" && semver.IsValid(a) && semver.Compare(version, a) >= 0 {
		evidence = "Applied-Upstream: " + a
	} else if tag := backportTag(h.UpstreamBackport, version); tag != "" && semver.Compare(version, tag) >= 0 {
		evidence = "Upstream-Backport in " + tag
	}
	switch {
	case evidence != "" && reg == RegressionPasses:
		return FixSuperseded, fmt.Sprintf("%s, and the regression tests pass on pristine %s: drop the patch, its glue and tests", evidence, version)
	case evidence != "" && reg == RegressionFails:
		return FixWeaker, fmt.Sprintf("%s, but the regression tests still fail on pristine %s: upstream's fix does not cover what the patch does; keep it and say so in its header", evidence, version)
	case evidence != "":
		return FixUnverified, fmt.Sprintf("(%s); regression check not run: run it on pristine %s to tell superseded from enhancement", evidence, version)
	case h.UpstreamBackport != "" && reg == RegressionPasses:
		return FixSuperseded, fmt.Sprintf("Upstream-Backport %s, and the regression tests pass on pristine %s: the backport is in it; drop the patch, its glue and tests", strings.Fields(h.UpstreamBackport)[0], version)
	}
	return "", ""
}

// backportTag is the tag an Upstream-Backport header records the backport
// in ("https://... (in v1.18.3)"), when it is of version's minor.
func backportTag(backport, version string) string {
	for _, f := range strings.Fields(backport) {
		f = strings.Trim(f, "(),;.:")
		if semver.IsValid(f) && semver.Canonical(f) == f && semver.MajorMinor(f) == semver.MajorMinor(version) {
			return f
		}
	}
	return ""
}
