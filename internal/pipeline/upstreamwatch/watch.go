package upstreamwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/rebase"
)

// Verdict is what a tag needs, from the rebase report: its worst patch.
type Verdict string

const (
	Clean           Verdict = "clean"
	Offset          Verdict = "offset"
	AlreadyUpstream Verdict = "already upstream"
	Conflict        Verdict = "conflict"
	// Failed is a tag the watch could not try (download, checksum, series).
	Failed Verdict = "error"
)

// Options say what to watch.
type Options struct {
	// Only limits the watch to one upstream; empty watches all.
	Only string
	// PreReleases includes pre-release tags.
	PreReleases bool
	// PristineCheck returns the regression check for an upstream's
	// pristine trees (rebase.Options.PristineCheck); nil runs none.
	PristineCheck func(up *pins.Upstream) rebase.PristineCheck
	// Log receives a line per step, and a heartbeat every Heartbeat while
	// a tag's download or regression check runs; nil discards them.
	Log io.Writer
	// Heartbeat is the heartbeat's interval; zero means progress.Interval.
	Heartbeat time.Duration
}

// Report is the outcome of one watch.
type Report struct {
	Upstreams []*UpstreamReport
}

// UpstreamReport is one upstream's listed and tried tags.
type UpstreamReport struct {
	Name   string
	Module string
	Pinned []string
	// Listed is every version the proxy lists.
	Listed []string
	Tags   []*TagReport
	// Err is why the versions could not be listed.
	Err string
}

// TagReport is one tried tag.
type TagReport struct {
	Candidate
	Verdict Verdict
	Rebase  *rebase.Report
	// Err is why the tag could not be tried (Verdict Failed).
	Err string
}

// Run lists each upstream's tags and tries the series on every one Select
// picks. The error joins what could not be listed or tried; the report is
// complete for everything else and says which tags failed.
func Run(ctx context.Context, c pipeline.Config, f *pins.File, o Options) (*Report, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	r := &Report{}
	var errs []error
	found := false
	for _, up := range f.Upstreams {
		if o.Only != "" && !up.Named(o.Only) {
			continue
		}
		found = true
		ur := &UpstreamReport{Name: up.Name, Module: up.Module}
		r.Upstreams = append(r.Upstreams, ur)
		for _, p := range up.Pins {
			ur.Pinned = append(ur.Pinned, p.Version)
		}
		fmt.Fprintf(log, "watch: listing the versions of %s\n", up.Module)
		listed, err := c.Download.Versions(ctx, up.Module)
		if err != nil {
			ur.Err = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", up.Name, err))
			continue
		}
		ur.Listed = listed
		for _, cand := range Select(up.Pins, listed, o.PreReleases) {
			if err := ctx.Err(); err != nil {
				return r, errors.Join(append(errs, err)...)
			}
			fmt.Fprintf(log, "watch: rebasing %s onto %s (%s)\n", up.Name, cand.Version, cand.Reason)
			tr := &TagReport{Candidate: cand}
			ur.Tags = append(ur.Tags, tr)
			ro := rebase.Options{Upstream: up, Version: cand.Version, Log: o.Log, Heartbeat: o.Heartbeat}
			if o.PristineCheck != nil {
				ro.PristineCheck = o.PristineCheck(up)
			}
			rr, err := rebase.Run(ctx, c, ro)
			if err != nil {
				tr.Verdict, tr.Err = Failed, err.Error()
				errs = append(errs, fmt.Errorf("%s %s: %w", up.Name, cand.Version, err))
				continue
			}
			tr.Rebase, tr.Verdict = rr, verdict(rr)
		}
	}
	if !found {
		_, err := f.Upstream(o.Only)
		return nil, err
	}
	return r, errors.Join(errs...)
}

// verdict is the tag's worst patch or override status: a conflict must be
// fixed, an already-upstream patch or superseded override dropped, an
// offset refreshed.
func verdict(r *rebase.Report) Verdict {
	switch {
	case r.Count(rebase.Conflict) > 0, r.OverrideCount(overrides.Conflicts) > 0:
		return Conflict
	case r.Count(rebase.AlreadyUpstream) > 0, r.OverrideCount(overrides.Superseded) > 0:
		return AlreadyUpstream
	case r.Count(rebase.Offset) > 0:
		return Offset
	default:
		return Clean
	}
}

// New reports whether the watch found any tag to try.
func (r *Report) New() int {
	n := 0
	for _, u := range r.Upstreams {
		n += len(u.Tags)
	}
	return n
}
