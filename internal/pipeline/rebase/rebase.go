package rebase

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
	"github.com/holdfast-dist/holdfast/internal/pipeline/progress"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// Status is what a patch needs on the new version.
type Status string

const (
	Clean           Status = "applies cleanly"
	Offset          Status = "applies with offset"
	Conflict        Status = "conflicts"
	AlreadyUpstream Status = "already upstream"
)

// PatchReport is one patch's outcome.
type PatchReport struct {
	Patch  *patchset.Patch
	Status Status
	// UpstreamFix says, when upstream has its own fix, whether it
	// supersedes the patch or the patch stays as an enhancement; see
	// ClassifyUpstreamFix. Empty when upstream has no fix of its own.
	UpstreamFix UpstreamFix
	// UpstreamFixWhy is the evidence: header and regression verdict.
	UpstreamFixWhy string
	// Notes say where moved hunks were found, which hunks conflict and
	// why, or what the header's Applied-Upstream says.
	Notes []string
}

// PristineCheck runs holdfast's regression tests on a pristine tree of the
// new version (laid by pipeline.Config.Lay with the tests carried in) and
// reports whether they pass there, meaning upstream fixed the bug, perhaps
// differently from the series. The build and test step provides it; until
// then the report says the check was not run.
type PristineCheck func(ctx context.Context, tree string) (fixed bool, detail string, err error)

// Options say what to try.
type Options struct {
	Upstream *pins.Upstream
	Version  string
	// Series names the series folder (relative to the repository root);
	// empty picks the series of the same or nearest pinned minor.
	Series        string
	PristineCheck PristineCheck
	// Log receives a heartbeat line every Heartbeat while a long step runs
	// (the download, the regression check on pristine); nil prints none.
	// The report itself is the caller's to print.
	Log io.Writer
	// Heartbeat is the heartbeat's interval; zero means progress.Interval.
	Heartbeat time.Duration
}

// Report is the outcome of a rebase attempt.
type Report struct {
	Upstream *pins.Upstream
	Module   pristine.Module
	// Verified says what the module's source was checked against: "the
	// pin" or "the checksum database" (through the go command's answer).
	Verified     string
	Series       string
	SeriesReason string
	Patches      []PatchReport
	// Pristine is the outcome of the regression check on pristine source.
	Pristine string
	// Regression is that outcome as a verdict.
	Regression Regression
	// Overrides is each entry of the series' overrides file judged against
	// the new version's go.mod: still needed, superseded or conflicting;
	// the go entry first (Entry.Module overrides.GoModule).
	Overrides []overrides.Verdict
}

// Run tries the series on the new version. The returned error is for
// failures to run at all; conflicts are in the report.
func Run(ctx context.Context, c pipeline.Config, o Options) (*Report, error) {
	up := o.Upstream
	// A query such as "latest" would resolve to some version; a rebase
	// report is about one named tag.
	if !semver.IsValid(o.Version) || semver.Canonical(o.Version) != o.Version {
		return nil, fmt.Errorf("version %q is not a full semantic version such as v1.18.2", o.Version)
	}
	r := &Report{Upstream: up, Series: o.Series, SeriesReason: "named on the command line"}
	if r.Series == "" {
		var err error
		if r.Series, r.SeriesReason, err = chooseSeries(up, o.Version); err != nil {
			// A tag that does not exist (a typo, v9.0.0) has no series
			// either; say the first thing wrong with it.
			if _, dlErr := c.Download.Download(ctx, up.Module, o.Version); dlErr != nil {
				return nil, fmt.Errorf("%s %s cannot be fetched from the module proxy (is it a released tag?): %w", up.Module, o.Version, dlErr)
			}
			return nil, err
		}
	}
	in, err := c.LoadInputs(up, r.Series)
	if err != nil {
		return nil, err
	}
	stop := progress.StartEvery(o.Log, "downloading "+up.Module+"@"+o.Version, o.Heartbeat)
	mod, err := c.Download.Download(ctx, up.Module, o.Version)
	stop()
	if err != nil {
		return nil, err
	}
	// The go command checked the zip against the checksum database; check
	// the extracted folder against that answer, and against the pin if
	// this version is pinned.
	want, what := mod.Sum, "the checksum database"
	if pin, err := up.Pin(o.Version); err == nil {
		want, what = pin.Sum, "the pin"
	}
	if err := pristine.Verify(mod, want); err != nil {
		return nil, err
	}
	r.Module, r.Verified = mod, what
	if len(in.Overrides) > 0 || in.GoLine != nil {
		goMod := filepath.Join(mod.Dir, "go.mod")
		data, err := os.ReadFile(goMod)
		if err != nil {
			return nil, err
		}
		if in.GoLine != nil {
			v, err := overrides.CheckGo(goMod, data, *in.GoLine)
			if err != nil {
				return nil, err
			}
			r.Overrides = append(r.Overrides, v)
		}
		vs, err := overrides.Check(goMod, data, in.Overrides)
		if err != nil {
			return nil, err
		}
		r.Overrides = append(r.Overrides, vs...)
	}

	dir, err := os.MkdirTemp("", "holdfast-rebase-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	patched := filepath.Join(dir, "patched")
	if err := c.Lay(patched, up, mod, provenance.Patched); err != nil {
		return nil, err
	}
	tree := patchset.NewTree(patched)
	for _, p := range in.Series {
		pr, err := classify(tree, p, o.Version)
		if err != nil {
			return nil, err
		}
		r.Patches = append(r.Patches, pr)
	}

	r.Pristine = "not run: no regression check is wired in yet (rebase.Options.PristineCheck)"
	r.Regression = RegressionNotRun
	if o.PristineCheck != nil {
		pristineDir := filepath.Join(dir, "pristine")
		if err := c.Lay(pristineDir, up, mod, provenance.Pristine); err != nil {
			return nil, err
		}
		// The check builds and tests upstream's packages: minutes on a
		// cold cache, with no other output while go test holds it.
		stop := progress.StartEvery(o.Log, "running the regression tests on pristine "+o.Version, o.Heartbeat)
		fixed, detail, err := o.PristineCheck(ctx, pristineDir)
		stop()
		switch {
		case err != nil:
			r.Pristine = "failed to run: " + err.Error()
		case fixed:
			r.Pristine = "regression tests PASS on pristine " + o.Version + ": upstream fixed it; the series is no longer needed (" + detail + ")"
			r.Regression = RegressionPasses
		default:
			r.Pristine = "regression tests FAIL on pristine " + o.Version + " as expected: the series is still needed (" + detail + ")"
			r.Regression = RegressionFails
		}
	}
	for i := range r.Patches {
		p := &r.Patches[i]
		p.UpstreamFix, p.UpstreamFixWhy = ClassifyUpstreamFix(p.Patch.Header, o.Version, r.Regression)
	}
	return r, nil
}

// classify tries p on the tree as the earlier patches left it. A patch
// that applies (exactly or with offset) is kept, so later patches see it.
func classify(tree *patchset.Tree, p *patchset.Patch, version string) (PatchReport, error) {
	pr := PatchReport{Patch: p}
	exact, err := tree.Check(p, patchset.Options{})
	if err != nil {
		return pr, err
	}
	if exact.Applied() {
		pr.Status = Clean
		return pr, tree.Commit(exact)
	}
	moved, err := tree.Check(p, patchset.Options{Offset: true})
	if err != nil {
		return pr, err
	}
	if moved.Applied() {
		pr.Status = Offset
		for _, f := range moved.Files {
			for _, h := range f.Hunks {
				if h.Offset != 0 {
					pr.Notes = append(pr.Notes, fmt.Sprintf("%s: hunk #%d (%s): context found %s", f.Path, h.Index, h.Header, patchset.DescribeOffset(h.Offset)))
				}
			}
		}
		pr.Notes = append(pr.Notes, "refresh the patch against "+version+" so that it applies at its stated lines")
		return pr, tree.Commit(moved)
	}
	reverse, err := tree.Check(p, patchset.Options{Offset: true, Reverse: true})
	if err != nil {
		return pr, err
	}
	applied := p.Header.AppliedUpstream
	upstreamSays := applied != "no" && semver.Compare(version, applied) >= 0
	if reverse.Applied() {
		pr.Status = AlreadyUpstream
		note := "reverse-applies to pristine " + version + ": drop it from this series"
		if upstreamSays {
			note += fmt.Sprintf(" (Applied-Upstream: %s agrees)", applied)
		}
		pr.Notes = append(pr.Notes, note)
		return pr, nil
	}
	pr.Status = Conflict
	for _, f := range moved.Files {
		if f.Problem != "" {
			pr.Notes = append(pr.Notes, fmt.Sprintf("%s: %s", f.Path, f.Problem))
		}
		for _, h := range f.Hunks {
			switch {
			case !h.Applied:
				pr.Notes = append(pr.Notes, fmt.Sprintf("%s: hunk #%d (%s): CONFLICT: %s", f.Path, h.Index, h.Header, h.Problem))
			case h.Offset != 0:
				pr.Notes = append(pr.Notes, fmt.Sprintf("%s: hunk #%d (%s): context found %s", f.Path, h.Index, h.Header, patchset.DescribeOffset(h.Offset)))
			default:
				pr.Notes = append(pr.Notes, fmt.Sprintf("%s: hunk #%d (%s): applies", f.Path, h.Index, h.Header))
			}
		}
	}
	if upstreamSays {
		pr.Notes = append(pr.Notes, fmt.Sprintf("Applied-Upstream: %s: upstream has its own fix in %s; if the regression test passes on pristine, drop the patch", applied, version))
	} else if b := p.Header.UpstreamBackport; b != "" {
		// A backport is upstream's own code, so it conflicts rather than
		// reverse-applies: the pristine regression check decides.
		pr.Notes = append(pr.Notes, fmt.Sprintf("Upstream-Backport: %s: if %s contains it, the regression test passes on pristine and the patch can be dropped", strings.Fields(b)[0], version))
	}
	return pr, nil
}

// Count returns how many patches have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, p := range r.Patches {
		if p.Status == s {
			n++
		}
	}
	return n
}

// OverrideCount returns how many override entries have status s.
func (r *Report) OverrideCount(s overrides.Status) int {
	n := 0
	for _, v := range r.Overrides {
		if v.Status == s {
			n++
		}
	}
	return n
}

// Clean reports whether the series applies to the new version exactly as
// it is, so that the version can be pinned with this series: every patch
// clean and every override still needed.
func (r *Report) Clean() bool {
	return r.Count(Clean) == len(r.Patches) && r.OverrideCount(overrides.Needed) == len(r.Overrides)
}
