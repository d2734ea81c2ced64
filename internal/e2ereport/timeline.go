package e2ereport

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

// TimelinePrefix starts the name of every timeline SVG, so that the
// e2e-report command can remove those of an older report.
const TimelinePrefix = "e2e-timeline-"

// Timeline is the picture of one rotation scenario's events, a track per
// build on one time axis, for the file File beside e2e.md.
type Timeline struct {
	Suite, Scenario, File string
	chart                 svgchart.TimelineChart
}

// timelineNote says what the axis is: each build's events are marked on
// one clock, the scenario's own, and the tracks are lined up on their
// rotation so that the builds compare.
const timelineNote = "Each point is an event the scenario marked on its own clock; a build's events are drawn from its rotation (0 s), so the builds line up on it. A track without a rotation is drawn from the scenario's start."

// Timelines are the scenarios the catalogue puts on a timeline
// (Row.Timeline), one chart per scenario, with a track per build in the
// report's order for each row that marked events; a row that marked none
// is named in the chart's notes, and a scenario no row of which marked any
// is not drawn.
func (r Report) Timelines() []Timeline { return r.timelines(OnTimeline) }

// timelines is Timelines with the catalogue's choice of rows given, so
// that a test can draw rows the catalogue does not hold.
func (r Report) timelines(onTimeline func(suite, name, binary string) bool) []Timeline {
	type key struct{ suite, name string }
	var order []key
	tracks := map[key][]svgchart.Track{}
	notes := map[key][]string{}
	for _, sc := range r.rows() {
		if !onTimeline(sc.Suite, sc.Name, sc.Binary) {
			continue
		}
		k := key{sc.Suite, sc.Name}
		if _, seen := notes[k]; !seen {
			order = append(order, k)
			notes[k] = []string{timelineNote}
		}
		lane := fmt.Sprintf("%s (%s)", sc.Binary, sc.Result)
		if len(sc.Events) == 0 {
			notes[k] = append(notes[k], lane+": no event marked.")
			continue
		}
		var origin time.Duration
		for _, e := range sc.Events {
			if e.Name == EventRotation {
				origin = e.At
				break
			}
		}
		tr := svgchart.Track{Name: lane}
		for _, e := range sc.Events {
			since := e.At - origin
			tr.Events = append(tr.Events, svgchart.Event{Label: e.Name, At: since.Seconds(), Text: formatOffset(since),
				Title: fmt.Sprintf("%s, %s: %s after the scenario began, %s from its rotation", sc.Binary, e.Name, formatDuration(e.At), formatOffset(since)),
				Attrs: []svgchart.Attr{{Name: "binary", Value: sc.Binary},
					{Name: "at-ms", Value: strconv.FormatInt(e.At.Milliseconds(), 10)},
					{Name: "since-rotation-ms", Value: strconv.FormatInt(since.Milliseconds(), 10)}}})
		}
		tracks[k] = append(tracks[k], tr)
	}
	used := map[string]bool{}
	out := make([]Timeline, 0, len(order))
	for _, k := range order {
		if len(tracks[k]) == 0 {
			continue
		}
		base := TimelinePrefix + slug(k.suite) + "-" + slug(k.name)
		file := base + ".svg"
		for i := 2; used[file]; i++ {
			file = base + "-" + strconv.Itoa(i) + ".svg"
		}
		used[file] = true
		out = append(out, Timeline{Suite: k.suite, Scenario: k.name, File: file, chart: svgchart.TimelineChart{
			Title: k.suite + ": " + k.name, Unit: "seconds from the rotation", Tracks: tracks[k], Notes: notes[k]}})
	}
	return out
}

// formatOffset is a time relative to the rotation, signed: an event
// before it (a failure seen before the rotation finished) reads "-1.2s".
func formatOffset(d time.Duration) string {
	if d < 0 {
		return "-" + formatDuration(-d)
	}
	return "+" + formatDuration(d)
}

// SVG draws the timeline. Its times are durations, always finite, so an
// error means a track without an event, which Timelines never makes.
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
