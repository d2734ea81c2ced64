package upstreamwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/rebase"
)

// Summary is one line per tried tag, and one per upstream with nothing new
// or whose versions could not be listed.
func (r *Report) Summary() []string {
	var lines []string
	for _, u := range r.Upstreams {
		switch {
		case u.Err != "":
			lines = append(lines, fmt.Sprintf("%s: error: could not list versions: %s", u.Name, firstLine(u.Err)))
		case len(u.Tags) == 0:
			lines = append(lines, fmt.Sprintf("%s: nothing new (pins %s; the proxy lists %d versions)", u.Name, strings.Join(u.Pinned, " "), len(u.Listed)))
		}
		for _, t := range u.Tags {
			line := fmt.Sprintf("%s %s: %s (%s)", u.Name, t.Version, t.Verdict, t.Reason)
			switch {
			case t.Err != "":
				line += ": " + firstLine(t.Err)
			case t.Rebase != nil:
				rr := t.Rebase
				line += fmt.Sprintf(": %d clean, %d with offset, %d conflicting, %d already upstream; series %s",
					rr.Count(rebase.Clean), rr.Count(rebase.Offset), rr.Count(rebase.Conflict), rr.Count(rebase.AlreadyUpstream), rr.Series)
				if len(rr.Overrides) > 0 {
					line += fmt.Sprintf("; overrides %d still needed, %d superseded, %d conflicting",
						rr.OverrideCount(overrides.Needed), rr.OverrideCount(overrides.Superseded), rr.OverrideCount(overrides.Conflicts))
				}
			}
			lines = append(lines, line)
		}
	}
	return lines
}

// WriteMarkdown writes the report for the pull request: a table of the
// tags, then each tag's rebase report as `holdfast rebase` prints it. It
// holds no timestamp, so that a watch finding the same tags writes the same
// file and the pull request does not churn.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Upstream watch\n\n")
	fmt.Fprintf(&b, "New upstream tags the module proxy serves, and how holdfast's patch series fares on each (`holdfast watch`; see docs/release.md).\n\n")
	fmt.Fprintf(&b, "| upstream | tag | why | verdict |\n|---|---|---|---|\n")
	for _, u := range r.Upstreams {
		switch {
		case u.Err != "":
			fmt.Fprintf(&b, "| %s | | could not list versions | error |\n", u.Name)
		case len(u.Tags) == 0:
			fmt.Fprintf(&b, "| %s | | nothing new (pins %s) | |\n", u.Name, strings.Join(u.Pinned, ", "))
		}
		for _, t := range u.Tags {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", u.Name, t.Version, t.Reason, t.Verdict)
		}
	}
	for _, u := range r.Upstreams {
		if u.Err != "" {
			fmt.Fprintf(&b, "\n## %s: could not list versions\n\n```\n%s\n```\n", u.Name, u.Err)
		}
		for _, t := range u.Tags {
			fmt.Fprintf(&b, "\n## %s %s: %s\n\n", u.Name, t.Version, t.Verdict)
			fmt.Fprintf(&b, "Picked as %s.\n\n```\n", t.Reason)
			if t.Err != "" {
				fmt.Fprintf(&b, "error: %s\n", t.Err)
			} else if err := t.Rebase.Write(&b); err != nil {
				return err
			}
			fmt.Fprintf(&b, "```\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

type jsonReport struct {
	New       int            `json:"new"`
	Upstreams []jsonUpstream `json:"upstreams"`
}

type jsonUpstream struct {
	Name   string    `json:"name"`
	Module string    `json:"module"`
	Pinned []string  `json:"pinned"`
	Listed []string  `json:"listed"`
	Tags   []jsonTag `json:"tags"`
	Error  string    `json:"error,omitempty"`
}

type jsonTag struct {
	Candidate
	Verdict Verdict     `json:"verdict"`
	Series  string      `json:"series,omitempty"`
	Sum     string      `json:"sum,omitempty"`
	Patches []jsonPatch `json:"patches,omitempty"`
	// Overrides are the series' overrides judged against the tag.
	Overrides []jsonOverride `json:"overrides,omitempty"`
	Pristine  string         `json:"pristine,omitempty"`
	// Regression is the pristine regression verdict ClassifyUpstreamFix used.
	Regression rebase.Regression `json:"regression,omitempty"`
	Error      string            `json:"error,omitempty"`
}

type jsonOverride struct {
	Module   string           `json:"module"`
	Version  string           `json:"version"`
	Upstream string           `json:"upstream,omitempty"`
	Status   overrides.Status `json:"status"`
	Reason   string           `json:"reason,omitempty"`
}

type jsonPatch struct {
	Name           string             `json:"name"`
	Status         rebase.Status      `json:"status"`
	UpstreamFix    rebase.UpstreamFix `json:"upstream_fix,omitempty"`
	UpstreamFixWhy string             `json:"upstream_fix_why,omitempty"`
	Notes          []string           `json:"notes,omitempty"`
}

// WriteJSON writes the report for scripts (the watch workflow reads "new").
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{New: r.New(), Upstreams: []jsonUpstream{}}
	for _, u := range r.Upstreams {
		ju := jsonUpstream{Name: u.Name, Module: u.Module, Pinned: u.Pinned, Listed: u.Listed, Tags: []jsonTag{}, Error: u.Err}
		for _, t := range u.Tags {
			jt := jsonTag{Candidate: t.Candidate, Verdict: t.Verdict, Error: t.Err}
			if rr := t.Rebase; rr != nil {
				jt.Series, jt.Sum, jt.Pristine, jt.Regression = rr.Series, rr.Module.Sum, rr.Pristine, rr.Regression
				for _, p := range rr.Patches {
					jt.Patches = append(jt.Patches, jsonPatch{Name: p.Patch.Name(), Status: p.Status, UpstreamFix: p.UpstreamFix, UpstreamFixWhy: p.UpstreamFixWhy, Notes: p.Notes})
				}
				for _, v := range rr.Overrides {
					jt.Overrides = append(jt.Overrides, jsonOverride{Module: v.Entry.Module, Version: v.Entry.Version, Upstream: v.Upstream, Status: v.Status, Reason: v.Reason})
				}
			}
			ju.Tags = append(ju.Tags, jt)
		}
		out.Upstreams = append(out.Upstreams, ju)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Save writes dir/watch.md and dir/watch.json, each through a temporary
// file and a rename, and returns their paths.
func (r *Report) Save(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, out := range []struct {
		name  string
		write func(io.Writer) error
	}{{"watch.md", r.WriteMarkdown}, {"watch.json", r.WriteJSON}} {
		path := filepath.Join(dir, out.name)
		tmp, err := os.CreateTemp(dir, "."+out.name+"-*")
		if err != nil {
			return nil, err
		}
		err = out.write(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
