package svgchart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Attr is a data attribute of a point or bar, written data-<Name>="<Value>":
// the report's own figure, in the report's own unit.
type Attr struct {
	Name  string
	Value string
}

// Point is one point of a Series.
type Point struct {
	X, Y float64
	// Title is the point's tooltip, the figure as the report prints it.
	Title string
	Attrs []Attr
}

// Series is one polyline, named in the legend.
type Series struct {
	Name   string
	Points []Point
}

// LineChart is a chart of Series over shared axes.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Notes are printed under the chart: what the lines leave out (a
	// point that has no value, such as a member that never recovered).
	Notes []string
}

// Bar is one horizontal bar of a Lane, from 0 to Value.
type Bar struct {
	Label string
	Value float64
	// Text, when set, is printed right of the bar: a bar of a few
	// milliseconds beside one of a minute is otherwise invisible.
	Text  string
	Title string
	Attrs []Attr
}

// Lane is a group of bars under one name (a build).
type Lane struct {
	Name string
	Bars []Bar
}

// BarChart draws Lanes of horizontal bars over one value axis.
type BarChart struct {
	Title, Unit string
	Lanes       []Lane
	Notes       []string
}

// The geometry is fixed: a report's pictures compare at a glance only if
// they share a size.
const (
	width      = 820
	plotLeft   = 80
	plotRight  = 560 // the legend sits right of it
	plotTop    = 50
	plotHeight = 300
	barHeight  = 16
	labelWidth = 230 // bar labels left of a bar chart's plot
)

// palette is colour-blind safe (Okabe–Ito); a series takes the colour of its
// position, so the same build keeps its colour between charts of one report.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// svgWriter is a bytes.Buffer that escapes text and attribute values.
type svgWriter struct{ bytes.Buffer }

func (w *svgWriter) esc(s string) string {
	var b strings.Builder
	// xml.EscapeText cannot fail on a strings.Builder; it also turns a
	// control character into U+FFFD, which an XML parser would refuse.
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (w *svgWriter) printf(format string, args ...any) { fmt.Fprintf(&w.Buffer, format, args...) }

func (w *svgWriter) attrs(as []Attr) string {
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, ` data-%s="%s"`, attrName(a.Name), w.esc(a.Value))
	}
	return b.String()
}

// attrName keeps a data attribute's name an XML name whatever the caller
// passed: letters, digits and '-', lower case.
func attrName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "value"
	}
	return b.String()
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// px rounds a coordinate to a tenth of a pixel, so that the bytes do not
// depend on the last bits of a division.
func px(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func (w *svgWriter) open(height int, title []string) {
	w.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	w.printf("<title>%s</title>\n", w.esc(strings.Join(title, " ")))
	w.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	for i, line := range title {
		w.printf(`<text x="10" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", 24+titleLine*i, w.esc(line))
	}
}

func (w *svgWriter) notes(y int, notes []string) {
	for i, n := range notes {
		w.printf(`<text class="note" x="%d" y="%d">%s</text>`+"\n", 10, y+16*i, w.esc(n))
	}
}

// Text is not measured, so lines are wrapped at a count of characters
// that fits the width at the font's size: a scenario's name is a sentence,
// and a line past the edge would be cut off.
const (
	titleChars = 85
	noteChars  = 120
	titleLine  = 18
)

// wrap breaks each of texts into lines of at most n characters at spaces
// (a longer word keeps a line of its own).
func wrap(n int, texts ...string) []string {
	var out []string
	for _, t := range texts {
		line := ""
		for _, word := range strings.Fields(t) {
			switch {
			case line == "":
				line = word
			case len([]rune(line))+1+len([]rune(word)) <= n:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return out
}

// SVG renders the chart, or says why it cannot: no series, a series with no
// point, or a coordinate that is not a finite number.
func (c LineChart) SVG() ([]byte, error) {
	if len(c.Series) == 0 {
		return nil, errors.New("line chart " + strconv.Quote(c.Title) + ": no series to draw")
	}
	var xs, ys []float64
	for _, s := range c.Series {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("line chart %q: series %q has no point", c.Title, s.Name)
		}
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				return nil, fmt.Errorf("line chart %q: series %q has a point (%v, %v) that is not a finite number", c.Title, s.Name, p.X, p.Y)
			}
			xs, ys = append(xs, p.X), append(ys, p.Y)
		}
	}
	xt, err := ticks(xs)
	if err != nil {
		return nil, fmt.Errorf("line chart %q: x: %w", c.Title, err)
	}
	yt, err := ticks(ys)
	if err != nil {
		return nil, fmt.Errorf("line chart %q: y: %w", c.Title, err)
	}
	xmin, xmax, ymin, ymax := xt[0], xt[len(xt)-1], yt[0], yt[len(yt)-1]
	title, notes := wrap(titleChars, c.Title), wrap(noteChars, c.Notes...)
	top := plotTop + titleLine*(len(title)-1)
	plotBottom := top + plotHeight
	sx := func(x float64) float64 { return plotLeft + (x-xmin)/(xmax-xmin)*(plotRight-plotLeft) }
	sy := func(y float64) float64 { return float64(plotBottom) - (y-ymin)/(ymax-ymin)*plotHeight }

	var w svgWriter
	height := plotBottom + 60 + 16*len(notes)
	w.open(height, title)
	w.printf(`<g class="axes" stroke="#333333">` + "\n")
	w.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	w.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, top, plotLeft, plotBottom)
	w.printf("</g>\n")
	for _, t := range xt {
		x := px(sx(t))
		w.printf(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333333"/><text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, plotBottom, x, plotBottom+5, x, plotBottom+18, num(t))
	}
	for _, t := range yt {
		y := px(sy(t))
		w.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#dddddd"/><text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft, y, plotRight, y, plotLeft-6, y, num(t))
	}
	w.printf(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+38, w.esc(c.XLabel))
	w.printf(`<text x="16" y="%d" text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`+"\n", top+plotHeight/2, top+plotHeight/2, w.esc(c.YLabel))
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		w.printf(`<g class="series" data-name="%s">`+"\n", w.esc(s.Name))
		pts := make([]string, len(s.Points))
		for j, p := range s.Points {
			pts[j] = px(sx(p.X)) + "," + px(sy(p.Y))
		}
		w.printf(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
		for _, p := range s.Points {
			w.printf(`<circle class="point" cx="%s" cy="%s" r="3.5" fill="%s" data-x="%s" data-y="%s"%s><title>%s</title></circle>`+"\n",
				px(sx(p.X)), px(sy(p.Y)), colour, num(p.X), num(p.Y), w.attrs(p.Attrs), w.esc(p.Title))
		}
		w.printf("</g>\n")
		ly := top + 10 + 20*i
		w.printf(`<g class="legend"><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d" dominant-baseline="middle">%s</text></g>`+"\n",
			plotRight+15, ly, plotRight+35, ly, colour, plotRight+40, ly, w.esc(s.Name))
	}
	w.notes(plotBottom+56, notes)
	w.printf("</svg>\n")
	return w.Bytes(), nil
}

// SVG renders the chart, or says why it cannot: no lane, a lane with no
// bar, or a value that is not a finite number. A negative value is drawn
// left of zero.
func (c BarChart) SVG() ([]byte, error) {
	if len(c.Lanes) == 0 {
		return nil, errors.New("bar chart " + strconv.Quote(c.Title) + ": no lane to draw")
	}
	vs := []float64{0}
	rows := 0
	for _, l := range c.Lanes {
		if len(l.Bars) == 0 {
			return nil, fmt.Errorf("bar chart %q: lane %q has no bar", c.Title, l.Name)
		}
		for _, b := range l.Bars {
			if !finite(b.Value) {
				return nil, fmt.Errorf("bar chart %q: lane %q, bar %q is not a finite number (%v)", c.Title, l.Name, b.Label, b.Value)
			}
			vs = append(vs, b.Value)
		}
		rows += 1 + len(l.Bars)
	}
	t, err := ticks(vs)
	if err != nil {
		return nil, fmt.Errorf("bar chart %q: %w", c.Title, err)
	}
	vmin, vmax := t[0], t[len(t)-1]
	left, right := labelWidth, width-40
	sx := func(v float64) float64 { return float64(left) + (v-vmin)/(vmax-vmin)*float64(right-left) }
	rowH := barHeight + 6
	title, notes := wrap(titleChars, c.Title), wrap(noteChars, c.Notes...)
	top := plotTop + titleLine*(len(title)-1)
	plotBottom := top + rows*rowH + 4

	var w svgWriter
	height := plotBottom + 50 + 16*len(notes)
	w.open(height, title)
	for _, v := range t {
		x := px(sx(v))
		w.printf(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#dddddd"/><text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, top, x, plotBottom, x, plotBottom+16, num(v))
	}
	w.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", left, plotBottom, right, plotBottom)
	w.printf(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (left+right)/2, plotBottom+36, w.esc(c.Unit))
	y := top
	for i, l := range c.Lanes {
		colour := palette[i%len(palette)]
		w.printf(`<g class="lane" data-name="%s">`+"\n", w.esc(l.Name))
		w.printf(`<text x="10" y="%d" font-weight="bold" dominant-baseline="middle">%s</text>`+"\n", y+rowH/2, w.esc(l.Name))
		y += rowH
		for _, b := range l.Bars {
			x0, x1 := sx(0), sx(b.Value)
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			w.printf(`<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", 20, y+rowH/2, w.esc(b.Label))
			w.printf(`<rect class="bar" x="%s" y="%d" width="%s" height="%d" fill="%s" data-label="%s" data-value="%s"%s><title>%s</title></rect>`+"\n",
				px(x0), y+3, px(x1-x0), barHeight, colour, w.esc(b.Label), num(b.Value), w.attrs(b.Attrs), w.esc(b.Title))
			if b.Text != "" {
				w.printf(`<text class="value" x="%s" y="%d" dominant-baseline="middle">%s</text>`+"\n", px(x1+4), y+rowH/2, w.esc(b.Text))
			}
			y += rowH
		}
		w.printf("</g>\n")
	}
	w.notes(plotBottom+52, notes)
	w.printf("</svg>\n")
	return w.Bytes(), nil
}

// ticks returns round tick values (1, 2 or 5 times a power of ten apart,
// about five intervals) from at most zero to at least the largest of vs:
// an axis from zero keeps a difference from looking bigger than it is.
func ticks(vs []float64) ([]float64, error) {
	lo, hi := 0.0, 0.0
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !finite(hi - lo) {
		return nil, fmt.Errorf("values from %v to %v span more than a float64 holds", lo, hi)
	}
	if hi == lo {
		hi = 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for i := 0; ; i++ {
		// Multiplying instead of adding, and rounding to the step's
		// digits, keeps 0.1 + 0.2 from printing as 0.30000000000000004.
		v := start + float64(i)*step
		if digits := -math.Floor(math.Log10(step)); digits > 0 {
			p := math.Pow(10, digits)
			v = math.Round(v*p) / p
		}
		out = append(out, v)
		if v >= hi || i > 20 {
			return out, nil
		}
	}
}
