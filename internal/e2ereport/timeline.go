package e2ereport

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

// TimelinePrefix starts the name of every timeline SVG, so that the
// e2e-report command can remove those of an older report.
const TimelinePrefix = "e2e-timeline-"

// Timeline is the picture of one rotation scenario's timings, a lane per
// build, for the file File beside e2e.md.
type Timeline struct {
	Suite, Scenario, File string
	chart                 svgchart.BarChart
}

// timelineNote says what the bars are: the rows carry durations, each
// measured from its own start (its name says which), not timestamps on
// one clock, so a bar starts at zero rather than where the rotation put it.
const timelineNote = "Each bar is one timing of the row, from its own start (its name says which: member-restart from the kill, restart-to-recovered from the restart); the rows carry no common clock."

// Timelines are the rotation scenarios of the report (a name that says
// rotation, and a row with a timing), one chart per scenario with a lane
// per build in the report's order, the bars in the order of their names.
func (r Report) Timelines() []Timeline {
	type key struct{ suite, name string }
	var order []key
	lanes := map[key][]svgchart.Lane{}
	for _, sc := range r.rows() {
		if len(sc.Timings) == 0 || !strings.Contains(strings.ToLower(sc.Name), "rotat") {
			continue
		}
		k := key{sc.Suite, sc.Name}
		if _, seen := lanes[k]; !seen {
			order = append(order, k)
		}
		names := make([]string, 0, len(sc.Timings))
		for n := range sc.Timings {
			names = append(names, n)
		}
		sort.Strings(names)
		lane := svgchart.Lane{Name: fmt.Sprintf("%s (%s)", sc.Binary, sc.Result)}
		for _, n := range names {
			d := sc.Timings[n]
			lane.Bars = append(lane.Bars, svgchart.Bar{Label: n, Value: d.Seconds(), Text: formatDuration(d),
				Title: fmt.Sprintf("%s, %s: %s", sc.Binary, n, formatDuration(d)),
				Attrs: []svgchart.Attr{{Name: "binary", Value: sc.Binary}, {Name: "ms", Value: strconv.FormatInt(d.Milliseconds(), 10)}}})
		}
		lanes[k] = append(lanes[k], lane)
	}
	used := map[string]bool{}
	out := make([]Timeline, 0, len(order))
	for _, k := range order {
		base := TimelinePrefix + slug(k.suite) + "-" + slug(k.name)
		file := base + ".svg"
		for i := 2; used[file]; i++ {
			file = base + "-" + strconv.Itoa(i) + ".svg"
		}
		used[file] = true
		out = append(out, Timeline{Suite: k.suite, Scenario: k.name, File: file, chart: svgchart.BarChart{
			Title: k.suite + ": " + k.name, Unit: "seconds", Lanes: lanes[k], Notes: []string{timelineNote}}})
	}
	return out
}

// SVG draws the timeline. Its timings are durations, always finite, so an
// error means a lane without a bar, which Timelines never makes.
func (t Timeline) SVG() ([]byte, error) { return t.chart.SVG() }

// slug makes a scenario's name, a sentence, part of a file name: lower
// case letters and digits, a dash for anything else, at most 60 bytes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "scenario"
	}
	return b.String()
}
