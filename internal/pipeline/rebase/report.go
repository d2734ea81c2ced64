package rebase

import (
	"fmt"
	"io"

	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
)

// Write prints the report for a person.
func (r *Report) Write(w io.Writer) error {
	fmt.Fprintf(w, "rebase %s onto %s\n", r.Upstream.Name, r.Module.Version)
	fmt.Fprintf(w, "  module  %s %s (extracted source matches %s)\n", r.Module, r.Module.Sum, r.Verified)
	fmt.Fprintf(w, "  series  %s (%s)\n\n", r.Series, r.SeriesReason)
	width := 0
	for _, p := range r.Patches {
		width = max(width, len(p.Patch.Name()))
	}
	for _, p := range r.Patches {
		fmt.Fprintf(w, "  %-*s  %s\n", width, p.Patch.Name(), p.Status)
		if p.UpstreamFix != "" {
			fmt.Fprintf(w, "      %s %s\n", p.UpstreamFix, p.UpstreamFixWhy)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "      %s\n", n)
		}
	}
	if len(r.Patches) == 0 {
		fmt.Fprintf(w, "  (the series is empty)\n")
	}
	if len(r.Overrides) > 0 {
		fmt.Fprintf(w, "\n  overrides (%s/%s)\n", r.Series, overrides.FileName)
		mw := 0
		for _, v := range r.Overrides {
			mw = max(mw, len(v.Entry.Module+" "+v.Entry.Version))
		}
		for _, v := range r.Overrides {
			upstream := "upstream requires " + v.Upstream
			switch {
			case v.Entry.Module == overrides.GoModule:
				upstream = "upstream's go line " + v.Upstream
			case v.Upstream == "":
				upstream = "not required upstream"
			}
			fmt.Fprintf(w, "  %-*s  %s (%s)\n", mw, v.Entry.Module+" "+v.Entry.Version, v.Status, upstream)
			if v.Reason != "" {
				fmt.Fprintf(w, "      %s\n", v.Reason)
			}
		}
	}
	fmt.Fprintf(w, "\n  %d clean, %d with offset, %d conflicting, %d already upstream\n",
		r.Count(Clean), r.Count(Offset), r.Count(Conflict), r.Count(AlreadyUpstream))
	if len(r.Overrides) > 0 {
		fmt.Fprintf(w, "  overrides: %d still needed, %d superseded by upstream, %d conflicting\n",
			r.OverrideCount(overrides.Needed), r.OverrideCount(overrides.Superseded), r.OverrideCount(overrides.Conflicts))
	}
	fmt.Fprintf(w, "  regression check on pristine: %s\n", r.Pristine)
	var err error
	switch {
	case r.Count(Conflict) > 0:
		_, err = fmt.Fprintf(w, "result: CONFLICT: fix the conflicting patches in a series for %s before pinning it\n", r.Module.Version)
	case r.OverrideCount(overrides.Conflicts) > 0:
		_, err = fmt.Fprintf(w, "result: CONFLICT: fix the conflicting overrides in a series for %s before pinning it\n", r.Module.Version)
	case !r.Clean():
		_, err = fmt.Fprintf(w, "result: NEEDS REFRESH: the series applies, but not exactly; refresh or drop patches (and superseded overrides) before pinning %s\n", r.Module.Version)
	default:
		_, err = fmt.Fprintf(w, "result: CLEAN: %s can be pinned with series %s\n", r.Module.Version, r.Series)
	}
	return err
}
