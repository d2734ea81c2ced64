package upstreamwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// JSONSchema names watch.json's layout. It changes only when a field is
// removed or changes meaning; new fields are added without a change.
const JSONSchema = "holdfast.watch/v1"

type jsonReport struct {
	Schema    string         `json:"schema"`
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
	Verdict Verdict            `json:"verdict"`
	Series  string             `json:"series,omitempty"`
	Sum     string             `json:"sum,omitempty"`
	Patches []rebase.JSONPatch `json:"patches,omitempty"`
	// Overrides are the series' overrides judged against the tag.
	Overrides []rebase.JSONOverride `json:"overrides,omitempty"`
	Pristine  string                `json:"pristine,omitempty"`
	// Regression is the pristine regression verdict ClassifyUpstreamFix used.
	Regression rebase.Regression `json:"regression,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// WriteJSON writes the report for scripts (the watch workflow reads "new").
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Schema: JSONSchema, New: r.New(), Upstreams: []jsonUpstream{}}
	for _, u := range r.Upstreams {
		ju := jsonUpstream{Name: u.Name, Module: u.Module, Pinned: u.Pinned, Listed: u.Listed, Tags: []jsonTag{}, Error: u.Err}
		for _, t := range u.Tags {
			jt := jsonTag{Candidate: t.Candidate, Verdict: t.Verdict, Error: t.Err}
			if rr := t.Rebase; rr != nil {
				jt.Series, jt.Sum, jt.Pristine, jt.Regression = rr.Series, rr.Module.Sum, rr.Pristine, rr.Regression
				jt.Patches, jt.Overrides = rr.PatchesJSON(), rr.OverridesJSON()
			}
			ju.Tags = append(ju.Tags, jt)
		}
		out.Upstreams = append(out.Upstreams, ju)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Save writes dir/watch.md and dir/watch.json and returns their paths. Both
// are rendered before either is written and each goes through a temporary
// file and a rename (rebase.SaveFiles), so an error leaves no half-written
// report, and a rendering error none at all.
func (r *Report) Save(dir string) ([]string, error) {
	var md, js bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	if err := r.WriteJSON(&js); err != nil {
		return nil, err
	}
	return rebase.SaveFiles(dir, []rebase.File{{Name: "watch.md", Data: md.Bytes()}, {Name: "watch.json", Data: js.Bytes()}})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
