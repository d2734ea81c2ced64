package e2ereport

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Markdown renders the report: a summary line, one table per suite, links
// to the timelines, and the component versions.
func (r Report) Markdown() []byte { return r.markdownWith(r.Timelines()) }

// markdownWith is Markdown linking tls.
func (r Report) markdownWith(tls []Timeline) []byte {
	var b bytes.Buffer
	b.WriteString("# holdfast end-to-end report\n\n")
	total, met := r.counts()
	switch {
	case total == 0:
		b.WriteString("No scenarios ran.\n")
	case met == total:
		fmt.Fprintf(&b, "All %d scenarios showed the expected result.\n", total)
	default:
		fmt.Fprintf(&b, "**%d of %d scenarios did not show the expected result.**\n", total-met, total)
	}
	if r.HoldfastCommit != "" {
		fmt.Fprintf(&b, "\nRun at holdfast commit %s (%s checkout).\n", r.HoldfastCommit, r.HoldfastTreeState)
	}
	b.WriteString("\nA pristine (unpatched upstream) binary is expected to be red: that shows the scenario detects the bug the patch fixes. A pristine row expected to pass is a control: it shows upstream's own behaviour.\n")

	for _, s := range r.Suites {
		fmt.Fprintf(&b, "\n## %s\n\n", cell(s.Suite))
		if !s.Finished.IsZero() {
			fmt.Fprintf(&b, "Finished %s.\n\n", s.Finished.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if len(s.Scenarios) == 0 {
			b.WriteString("No scenarios ran.\n")
			continue
		}
		b.WriteString("| Scenario | Binary | Result | Expected | As expected | Duration | Timings | Notes |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		for _, sc := range s.Scenarios {
			if sc.Suite == "" {
				sc.Suite = s.Suite
			}
			mark := "yes"
			if !sc.Met() {
				mark = "**NO**"
			}
			expected := string(sc.Expected)
			if want, listed := Expectation(sc.Suite, sc.Name, sc.Binary); listed && want != sc.Expected {
				expected += " (the catalogue: " + string(want) + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
				cell(sc.Name), cell(sc.Binary), cell(string(sc.Result)), cell(expected), mark,
				formatDuration(sc.Duration), timings(sc), notes(sc.Notes))
		}
	}

	if len(tls) > 0 {
		b.WriteString("\n## Rotation timelines\n\nThe events of each rotation scenario (rotation, first failure, recovery), a track per build (e2e-report writes the pictures beside this file; the Timings column has the figures). " + timelineNote + "\n")
		for _, t := range tls {
			fmt.Fprintf(&b, "\n%s / %s:\n\n![%s timeline per build](%s)\n", cell(t.Suite), cell(t.Scenario), altEscaper.Replace(cell(t.Scenario)), t.File)
		}
	}

	versions := r.Versions()
	if len(versions) > 0 {
		b.WriteString("\n## Versions\n\n| Component | Version |\n|---|---|\n")
		keys := make([]string, 0, len(versions))
		for k := range versions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %s |\n", cell(k), cell(versions[k]))
		}
	}
	return b.Bytes()
}

// timings is the Timings cell: the row's timings by name, then its events
// (Scenario.Events) on the scenario's clock.
func timings(sc Scenario) string {
	keys := make([]string, 0, len(sc.Timings))
	for k := range sc.Timings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys), len(keys)+len(sc.Events))
	for i, k := range keys {
		parts[i] = cell(k) + " " + formatDuration(sc.Timings[k])
	}
	// Events after the timings, in time order: they are moments, not
	// durations.
	for _, e := range sc.Events {
		parts = append(parts, cell(e.Name)+" at "+formatDuration(e.At))
	}
	return strings.Join(parts, "<br>")
}

func notes(ns []string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = cell(n)
	}
	return strings.Join(parts, "<br>")
}

// cellEscaper makes text safe inside a Markdown table cell: a pipe would end
// the cell, and angle brackets would be read as HTML (a note saying
// "<redacted>" would vanish from the rendered page).
var cellEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "&", "&amp;", "<", "&lt;", ">", "&gt;", "\r\n", "<br>", "\n", "<br>")

// altEscaper keeps a scenario's name inside an image's [alt text].
var altEscaper = strings.NewReplacer("[", `\[`, "]", `\]`)

func cell(s string) string {
	return cellEscaper.Replace(strings.TrimSpace(s))
}
