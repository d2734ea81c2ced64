package rebase

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	_, line := r.Result()
	_, err := fmt.Fprintf(w, "result: %s\n", line)
	return err
}

// Result is the report's verdict: a word for scripts (ResultConflict,
// ResultNeedsRefresh, ResultClean) and the sentence the human report ends
// with, after "result: ".
func (r *Report) Result() (word, line string) {
	switch {
	case r.Count(Conflict) > 0:
		return ResultConflict, "CONFLICT: fix the conflicting patches in a series for " + r.Module.Version + " before pinning it"
	case r.OverrideCount(overrides.Conflicts) > 0:
		return ResultConflict, "CONFLICT: fix the conflicting overrides in a series for " + r.Module.Version + " before pinning it"
	case !r.Clean():
		return ResultNeedsRefresh, "NEEDS REFRESH: the series applies, but not exactly; refresh or drop patches (and superseded overrides) before pinning " + r.Module.Version
	default:
		return ResultClean, "CLEAN: " + r.Module.Version + " can be pinned with series " + r.Series
	}
}

// The words of Result, and of the JSON report's "result".
const (
	ResultConflict     = "conflict"
	ResultNeedsRefresh = "needs refresh"
	ResultClean        = "clean"
)

// JSONSchema names the JSON report's layout. It changes only when a field
// is removed or changes meaning; new fields are added without a change.
const JSONSchema = "holdfast.rebase/v1"

// JSONReport is the JSON report: the human report's content, field for
// field. docs/pipeline.md documents it.
type JSONReport struct {
	Schema        string         `json:"schema"`
	Upstream      string         `json:"upstream"`
	Module        string         `json:"module"`
	Version       string         `json:"version"`
	Sum           string         `json:"sum"`
	Verified      string         `json:"verified"`
	Series        string         `json:"series"`
	SeriesReason  string         `json:"seriesReason"`
	Patches       []JSONPatch    `json:"patches"`
	Overrides     []JSONOverride `json:"overrides"`
	Counts        JSONCounts     `json:"counts"`
	Pristine      string         `json:"pristine"`
	Regression    Regression     `json:"regression"`
	Result        string         `json:"result"`
	ResultMessage string         `json:"resultMessage"`
}

// JSONPatch is one patch of a JSON report (also watch.json's).
type JSONPatch struct {
	Name           string      `json:"name"`
	Status         Status      `json:"status"`
	UpstreamFix    UpstreamFix `json:"upstreamFix,omitempty"`
	UpstreamFixWhy string      `json:"upstreamFixWhy,omitempty"`
	Notes          []string    `json:"notes,omitempty"`
}

// JSONOverride is one overrides entry of a JSON report (also watch.json's).
type JSONOverride struct {
	Module   string           `json:"module"`
	Version  string           `json:"version"`
	Upstream string           `json:"upstream,omitempty"`
	Status   overrides.Status `json:"status"`
	Reason   string           `json:"reason,omitempty"`
}

// JSONCounts are the human report's count lines.
type JSONCounts struct {
	Clean               int `json:"clean"`
	Offset              int `json:"offset"`
	Conflict            int `json:"conflict"`
	AlreadyUpstream     int `json:"alreadyUpstream"`
	OverridesNeeded     int `json:"overridesNeeded"`
	OverridesSuperseded int `json:"overridesSuperseded"`
	OverridesConflict   int `json:"overridesConflict"`
}

// PatchesJSON is r's patches as the JSON reports carry them; never nil,
// so an empty series is [] rather than null.
func (r *Report) PatchesJSON() []JSONPatch {
	out := []JSONPatch{}
	for _, p := range r.Patches {
		out = append(out, JSONPatch{Name: p.Patch.Name(), Status: p.Status, UpstreamFix: p.UpstreamFix, UpstreamFixWhy: p.UpstreamFixWhy, Notes: p.Notes})
	}
	return out
}

// OverridesJSON is r's override verdicts as the JSON reports carry them;
// never nil.
func (r *Report) OverridesJSON() []JSONOverride {
	out := []JSONOverride{}
	for _, v := range r.Overrides {
		out = append(out, JSONOverride{Module: v.Entry.Module, Version: v.Entry.Version, Upstream: v.Upstream, Status: v.Status, Reason: v.Reason})
	}
	return out
}

// JSON is the JSON report.
func (r *Report) JSON() JSONReport {
	word, line := r.Result()
	return JSONReport{
		Schema: JSONSchema, Upstream: r.Upstream.Name, Module: r.Module.Path, Version: r.Module.Version,
		Sum: r.Module.Sum, Verified: r.Verified, Series: r.Series, SeriesReason: r.SeriesReason,
		Patches: r.PatchesJSON(), Overrides: r.OverridesJSON(),
		Counts: JSONCounts{
			Clean: r.Count(Clean), Offset: r.Count(Offset), Conflict: r.Count(Conflict), AlreadyUpstream: r.Count(AlreadyUpstream),
			OverridesNeeded: r.OverrideCount(overrides.Needed), OverridesSuperseded: r.OverrideCount(overrides.Superseded),
			OverridesConflict: r.OverrideCount(overrides.Conflicts),
		},
		Pristine: r.Pristine, Regression: r.Regression, Result: word, ResultMessage: line,
	}
}

// WriteJSON writes the JSON report, indented, one trailing newline.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.JSON())
}

// Save writes the human report and the JSON report as dir/name.txt and
// dir/name.json and returns their paths. Both are rendered before either
// is written, and each goes through a temporary file and a rename, so an
// error leaves no half-written report, and a rendering error none at all.
func (r *Report) Save(dir, name string) ([]string, error) {
	var text, js bytes.Buffer
	if err := r.Write(&text); err != nil {
		return nil, err
	}
	if err := r.WriteJSON(&js); err != nil {
		return nil, err
	}
	return SaveFiles(dir, []File{{name + ".txt", text.Bytes()}, {name + ".json", js.Bytes()}})
}

// File is one report file for SaveFiles.
type File struct {
	Name string
	Data []byte
}

// SaveFiles writes each file into dir through a temporary file and a
// rename, in order, and returns their paths. A reader sees the old file or
// the new one, never part of one; on an error the files not yet renamed
// are left as they were.
func SaveFiles(dir string, files []File) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		tmp, err := os.CreateTemp(dir, "."+f.Name+"-*")
		if err != nil {
			return nil, err
		}
		_, err = tmp.Write(f.Data)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// CreateTemp's 0600 would hide a report from other readers.
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
