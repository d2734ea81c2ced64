package e2ereport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Report is every suite's report, merged.
type Report struct {
	// HoldfastCommit and HoldfastTreeState name the checkout the report
	// was merged in; the release step refuses a report of another commit.
	HoldfastCommit    string  `json:"holdfastCommit,omitempty"`
	HoldfastTreeState string  `json:"holdfastTreeState,omitempty"`
	Suites            []Suite `json:"suites"`
}

// Merge reads every <suite>.json in dir (what Recorder.Flush writes) into a
// Report, suites ordered by name. A file that does not parse is an error
// naming it: a report that silently drops a suite would read as green.
func Merge(dir string) (Report, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return Report{}, err
	}
	var r Report
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return Report{}, fmt.Errorf("reading suite report: %w", err)
		}
		var s Suite
		if err := json.Unmarshal(data, &s); err != nil {
			return Report{}, fmt.Errorf("suite report %s: %w", p, err)
		}
		if s.Suite == "" {
			s.Suite = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		r.Suites = append(r.Suites, s)
	}
	sort.SliceStable(r.Suites, func(i, j int) bool { return r.Suites[i].Suite < r.Suites[j].Suite })
	return r, nil
}

// Unmet returns the scenarios that did not show what is required of them
// (Scenario.Met).
func (r Report) Unmet() []Scenario {
	var out []Scenario
	for _, sc := range r.rows() {
		if !sc.Met() {
			out = append(out, sc)
		}
	}
	return out
}

// rows is every suite's scenarios, a row without a suite of its own given
// its file's: the catalogue's rows are found, and judged, by suite.
func (r Report) rows() []Scenario {
	var out []Scenario
	for _, s := range r.Suites {
		for _, sc := range s.Scenarios {
			if sc.Suite == "" {
				sc.Suite = s.Suite
			}
			out = append(out, sc)
		}
	}
	return out
}

// Versions merges the suites' versions. Suites normally agree; where they
// do not, the value lists each version with the suites that reported it,
// since the difference itself is worth seeing.
func (r Report) Versions() Versions {
	bySuite := map[string]map[string][]string{} // component -> version -> suites
	for _, s := range r.Suites {
		for k, v := range s.Versions {
			if bySuite[k] == nil {
				bySuite[k] = map[string][]string{}
			}
			bySuite[k][v] = append(bySuite[k][v], s.Suite)
		}
	}
	out := Versions{}
	for k, versions := range bySuite {
		if len(versions) == 1 {
			for v := range versions {
				out[k] = v
			}
			continue
		}
		var parts []string
		for v, suites := range versions {
			parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(suites, ", ")))
		}
		sort.Strings(parts)
		out[k] = strings.Join(parts, "; ")
	}
	return out
}

// JSON is the merged report as indented JSON, with the merged versions.
func (r Report) JSON() ([]byte, error) {
	total, met := r.counts()
	// Report is embedded, not copied field by field, so every field it
	// gains reaches the file the release step reads back.
	return json.MarshalIndent(struct {
		Report
		Scenarios int      `json:"scenarios"`
		Met       int      `json:"met"`
		Versions  Versions `json:"versions"`
	}{r, total, met, r.Versions()}, "", "  ")
}

func (r Report) counts() (total, met int) {
	rows := r.rows()
	return len(rows), len(rows) - len(r.Unmet())
}
