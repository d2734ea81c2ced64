package svgchart

import (
	"errors"
	"fmt"
	"strconv"
)

// Event is one moment of a Track, At units along the chart's time axis.
type Event struct {
	// Label names the event ("rotation", "recovery"); events of one label
	// share a colour in every track, and the legend says which.
	Label string
	At    float64
	// Text, when set, is printed beside the point (the figure).
	Text  string
	Title string
	Attrs []Attr
}

// Track is one row of a TimelineChart (a build): its events on the common
// time axis, joined by a line from the first to the last.
type Track struct {
	Name   string
	Events []Event
}

// TimelineChart draws Tracks of events over one time axis: where the
// moments of each track fall, and how far apart.
type TimelineChart struct {
	Title, Unit string
	Tracks      []Track
	Notes       []string
}

// trackHeight leaves room for an event's figure above and below its point.
const trackHeight = 44

// legendLeft is where the event legend starts, right of the time axis.
const legendLeft = width - 175

// SVG renders the chart, or says why it cannot: no track, a track with no
// event, or a time that is not a finite number. The axis starts at zero or
// at the earliest time, whichever is less.
func (c TimelineChart) SVG() ([]byte, error) {
	if len(c.Tracks) == 0 {
		return nil, errors.New("timeline chart " + strconv.Quote(c.Title) + ": no track to draw")
	}
	vs := []float64{0}
	var labels []string
	colour := map[string]string{}
	for _, tr := range c.Tracks {
		if len(tr.Events) == 0 {
			return nil, fmt.Errorf("timeline chart %q: track %q has no event", c.Title, tr.Name)
		}
		for _, e := range tr.Events {
			if !finite(e.At) {
				return nil, fmt.Errorf("timeline chart %q: track %q, event %q is not at a finite time (%v)", c.Title, tr.Name, e.Label, e.At)
			}
			vs = append(vs, e.At)
			if _, ok := colour[e.Label]; !ok {
				colour[e.Label] = palette[len(labels)%len(palette)]
				labels = append(labels, e.Label)
			}
		}
	}
	t, err := ticks(vs)
	if err != nil {
		return nil, fmt.Errorf("timeline chart %q: %w", c.Title, err)
	}
	vmin, vmax := t[0], t[len(t)-1]
	left, right := labelWidth, legendLeft-25
	sx := func(v float64) float64 { return float64(left) + (v-vmin)/(vmax-vmin)*float64(right-left) }
	title, notes := wrap(titleChars, c.Title), wrap(noteChars, c.Notes...)
	top := plotTop + titleLine*(len(title)-1)
	plotBottom := top + max(len(c.Tracks)*trackHeight, 20*len(labels)) + 4

	var w svgWriter
	height := plotBottom + 50 + 16*len(notes)
	w.open(height, title)
	for _, v := range t {
		x := px(sx(v))
		w.printf(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#dddddd"/><text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, top, x, plotBottom, x, plotBottom+16, num(v))
	}
	w.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", left, plotBottom, right, plotBottom)
	w.printf(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (left+right)/2, plotBottom+36, w.esc(c.Unit))
	for i, tr := range c.Tracks {
		y := top + i*trackHeight + trackHeight/2
		lo, hi := tr.Events[0].At, tr.Events[0].At
		for _, e := range tr.Events {
			lo, hi = min(lo, e.At), max(hi, e.At)
		}
		w.printf(`<g class="track" data-name="%s">`+"\n", w.esc(tr.Name))
		w.printf(`<text x="10" y="%d" font-weight="bold" dominant-baseline="middle">%s</text>`+"\n", y, w.esc(tr.Name))
		w.printf(`<line class="span" x1="%s" y1="%d" x2="%s" y2="%d" stroke="#777777" stroke-width="3"/>`+"\n", px(sx(lo)), y, px(sx(hi)), y)
		for j, e := range tr.Events {
			x := px(sx(e.At))
			w.printf(`<circle class="event" cx="%s" cy="%d" r="6" fill="%s" data-label="%s" data-at="%s"%s><title>%s</title></circle>`+"\n",
				x, y, colour[e.Label], w.esc(e.Label), num(e.At), w.attrs(e.Attrs), w.esc(e.Title))
			if e.Text != "" {
				// Alternately above and below, so that two events close
				// together do not print over each other.
				ty := y - 11
				if j%2 == 1 {
					ty = y + 19
				}
				w.printf(`<text class="value" x="%s" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n", x, ty, w.esc(e.Text))
			}
		}
		w.printf("</g>\n")
	}
	for i, l := range labels {
		ly := top + 10 + 20*i
		w.printf(`<g class="legend"><circle cx="%d" cy="%d" r="6" fill="%s"/><text x="%d" y="%d" dominant-baseline="middle">%s</text></g>`+"\n",
			legendLeft+6, ly, colour[l], legendLeft+18, ly, w.esc(l))
	}
	w.notes(plotBottom+52, notes)
	w.printf("</svg>\n")
	return w.Bytes(), nil
}
