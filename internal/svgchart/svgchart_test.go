package svgchart

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
)

func line() LineChart {
	return LineChart{
		Title: "p99 against K", XLabel: "K (members)", YLabel: "p99 (s)",
		Series: []Series{
			{Name: "patched", Points: []Point{
				{X: 10, Y: 12.5, Title: "K = 10: 12.5 s", Attrs: []Attr{{"k", "10"}, {"p99-ms", "12500"}}},
				{X: 100, Y: 27.25, Title: "K = 100: 27.3 s", Attrs: []Attr{{"k", "100"}, {"p99-ms", "27250"}}},
			}},
			{Name: "pristine+restart", Points: []Point{{X: 10, Y: 40, Title: "K = 10: 40.0 s"}}},
		},
		Notes: []string{"pristine+restart at K = 100: not recovered"},
	}
}

// Every point is read back with the figures it was given, under its
// series, from a document an XML parser accepts.
func TestLineChartMarksAreTheInput(t *testing.T) {
	svg, err := line().SVG()
	if err != nil {
		t.Fatal(err)
	}
	marks, err := Marks(svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
	want := []Mark{
		{Kind: "point", Series: "patched", Title: "K = 10: 12.5 s", Data: map[string]string{"x": "10", "y": "12.5", "k": "10", "p99-ms": "12500"}},
		{Kind: "point", Series: "patched", Title: "K = 100: 27.3 s", Data: map[string]string{"x": "100", "y": "27.25", "k": "100", "p99-ms": "27250"}},
		{Kind: "point", Series: "pristine+restart", Title: "K = 10: 40.0 s", Data: map[string]string{"x": "10", "y": "40"}},
	}
	if len(marks) != len(want) {
		t.Fatalf("read %d marks, want %d:\n%s", len(marks), len(want), svg)
	}
	for i := range want {
		if !sameMark(marks[i], want[i]) {
			t.Errorf("mark %d = %+v, want %+v", i, marks[i], want[i])
		}
	}
	for _, text := range []string{"p99 against K", "K (members)", "p99 (s)", "not recovered", "<polyline"} {
		if !bytes.Contains(svg, []byte(text)) {
			t.Errorf("the SVG lacks %q", text)
		}
	}
}

func sameMark(a, b Mark) bool {
	if a.Kind != b.Kind || a.Series != b.Series || a.Title != b.Title || len(a.Data) != len(b.Data) {
		return false
	}
	for k, v := range b.Data {
		if a.Data[k] != v {
			return false
		}
	}
	return true
}

// The same chart renders to the same bytes: the reports keep their SVGs
// beside the Markdown, and a rerun that changed nothing must not show a
// difference.
func TestDeterministic(t *testing.T) {
	a, err := line().SVG()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := line().SVG()
	if !bytes.Equal(a, b) {
		t.Error("two renderings of one line chart differ")
	}
	c, _ := bars().SVG()
	d, _ := bars().SVG()
	if !bytes.Equal(c, d) {
		t.Error("two renderings of one bar chart differ")
	}
}

func bars() BarChart {
	return BarChart{Title: "rotation", Unit: "seconds from each timing's start",
		Lanes: []Lane{
			{Name: "patched", Bars: []Bar{{Label: "member-restart", Value: 1.5, Text: "1.5 s <&>", Title: "1.5s"}, {Label: "restart-to-recovered", Value: 0.25}}},
			{Name: "pristine", Bars: []Bar{{Label: "blind-window", Value: 30, Attrs: []Attr{{"seconds", "30"}}}}},
		}}
}

func TestBarChartMarksAreTheInput(t *testing.T) {
	svg, err := bars().SVG()
	if err != nil {
		t.Fatal(err)
	}
	marks, err := Marks(svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
	if !bytes.Contains(svg, []byte(`>1.5 s &lt;&amp;&gt;</text>`)) {
		t.Errorf("the bar's text is not printed, escaped:\n%s", svg)
	}
	want := []Mark{
		{Kind: "bar", Series: "patched", Title: "1.5s", Data: map[string]string{"label": "member-restart", "value": "1.5"}},
		{Kind: "bar", Series: "patched", Data: map[string]string{"label": "restart-to-recovered", "value": "0.25"}},
		{Kind: "bar", Series: "pristine", Data: map[string]string{"label": "blind-window", "value": "30", "seconds": "30"}},
	}
	if len(marks) != len(want) {
		t.Fatalf("read %d marks, want %d:\n%s", len(marks), len(want), svg)
	}
	for i := range want {
		if !sameMark(marks[i], want[i]) {
			t.Errorf("mark %d = %+v, want %+v", i, marks[i], want[i])
		}
	}
}

// Names are any text: markup in them is escaped, not interpreted, and
// reads back as it was.
func TestHostileNamesAreEscaped(t *testing.T) {
	evil := `a<b>&"c'</svg><script>x</script>` + "\x01"
	c := LineChart{Title: evil, XLabel: evil, YLabel: evil, Notes: []string{evil},
		Series: []Series{{Name: evil, Points: []Point{{X: 1, Y: 2, Title: evil, Attrs: []Attr{{Name: `p"><x`, Value: evil}}}}}}}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	marks, err := Marks(svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
	if bytes.Contains(svg, []byte("<script")) {
		t.Errorf("a name's markup reached the SVG:\n%s", svg)
	}
	if len(marks) != 1 || !strings.HasPrefix(marks[0].Series, `a<b>&"c'</svg>`) || !strings.HasPrefix(marks[0].Title, `a<b>&"c'`) {
		t.Errorf("marks = %+v, want the name and title as given", marks)
	}
	if marks[0].Data["p---x"] == "" {
		t.Errorf("the attribute named %q was not kept as data-p---x: %+v", `p"><x`, marks[0].Data)
	}
	b := BarChart{Title: evil, Unit: evil, Lanes: []Lane{{Name: evil, Bars: []Bar{{Label: evil, Value: 1, Title: evil}}}}}
	svg, err = b.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Marks(svg); err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
}

// What cannot be drawn is an error naming the chart and the series, never
// a picture with a line to nowhere, nor a panic.
func TestUndrawableInput(t *testing.T) {
	for name, c := range map[string]LineChart{
		"no series":    {Title: "t"},
		"empty series": {Title: "t", Series: []Series{{Name: "patched"}}},
		"NaN":          {Title: "t", Series: []Series{{Name: "patched", Points: []Point{{X: 1, Y: math.NaN()}}}}},
		"+Inf":         {Title: "t", Series: []Series{{Name: "patched", Points: []Point{{X: math.Inf(1), Y: 1}}}}},
		"overflow":     {Title: "t", Series: []Series{{Name: "patched", Points: []Point{{X: 1, Y: math.MaxFloat64}, {X: 2, Y: -math.MaxFloat64}}}}},
	} {
		svg, err := c.SVG()
		if err == nil || svg != nil {
			t.Errorf("%s: SVG() = %d bytes, %v; want an error", name, len(svg), err)
			continue
		}
		if !strings.Contains(err.Error(), `"t"`) {
			t.Errorf("%s: %v does not name the chart", name, err)
		}
	}
	for name, c := range map[string]BarChart{
		"no lane":    {Title: "t"},
		"empty lane": {Title: "t", Lanes: []Lane{{Name: "patched"}}},
		"NaN":        {Title: "t", Lanes: []Lane{{Name: "patched", Bars: []Bar{{Label: "x", Value: math.NaN()}}}}},
	} {
		if svg, err := c.SVG(); err == nil || svg != nil {
			t.Errorf("%s: SVG() = %d bytes, %v; want an error", name, len(svg), err)
		}
	}
}

// Negative and all-zero values are drawable: the axis takes them in.
func TestNegativeAndZero(t *testing.T) {
	c := LineChart{Title: "t", Series: []Series{{Name: "s", Points: []Point{{X: 0, Y: 0}, {X: 1, Y: -3}}}}}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Marks(svg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte(`>-3</text>`)) && !bytes.Contains(svg, []byte(`>-4</text>`)) {
		t.Errorf("the y axis does not reach -3:\n%s", svg)
	}
	z := BarChart{Title: "t", Lanes: []Lane{{Name: "l", Bars: []Bar{{Label: "x", Value: 0}}}}}
	svg, err = z.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Marks(svg); err != nil {
		t.Fatal(err)
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{[]float64{10, 50, 100}, "0 20 40 60 80 100"},
		{[]float64{0.3}, "0 0.1 0.2 0.3"},
		{[]float64{27.3}, "0 10 20 30"},
		{[]float64{-3, 2}, "-3 -2 -1 0 1 2"},
		{[]float64{0}, "0 0.2 0.4 0.6 0.8 1"},
	} {
		got, err := ticks(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		s := make([]string, len(got))
		for i, v := range got {
			s[i] = num(v)
		}
		if strings.Join(s, " ") != tc.want {
			t.Errorf("ticks(%v) = %v, want %s", tc.in, s, tc.want)
		}
	}
}

func TestMarksRefusesBrokenXML(t *testing.T) {
	for _, doc := range []string{`<svg xmlns="http://www.w3.org/2000/svg"><g>`, `<html/>`, ``, `<svg xmlns="http://www.w3.org/2000/svg"><text>a & b</text></svg>`} {
		if _, err := Marks([]byte(doc)); err == nil {
			t.Errorf("Marks(%q) = nil error", doc)
		}
	}
}

// A title of a sentence's length is wrapped, not run past the edge, and
// the plot moves down under it; the whole of it stays the SVG's <title>.
func TestLongTitleWraps(t *testing.T) {
	long := strings.Repeat("rotation through the deployed chart ", 6)
	c := bars()
	c.Title = long
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Marks(svg); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(string(svg), "\n") {
		if strings.Contains(l, `font-size="15"`) {
			lines++
			if text := l[strings.Index(l, ">")+1 : strings.LastIndex(l, "<")]; len(text) > titleChars {
				t.Errorf("a title line of %d characters: %q", len(text), text)
			}
		}
	}
	if lines < 3 {
		t.Errorf("a %d-character title took %d lines", len(long), lines)
	}
	if !bytes.Contains(svg, []byte("<title>"+strings.TrimSpace(long)+"</title>")) {
		t.Error("the SVG's <title> is not the whole title")
	}
	short, _ := bars().SVG()
	firstBarY := func(svg []byte) string {
		m := regexp.MustCompile(`<rect class="bar" x="[^"]*" y="([0-9]+)"`).FindSubmatch(svg)
		if m == nil {
			t.Fatalf("no bar in\n%s", svg)
		}
		return string(m[1])
	}
	if a, b := firstBarY(short), firstBarY(svg); a != "75" || b != "111" {
		t.Errorf("the first bar is at y=%s under a one-line title and y=%s under three lines, want 75 and 111", a, b)
	}
	if got := wrap(10, "a bb ccccccccccccc d", ""); strings.Join(got, "|") != "a bb|ccccccccccccc|d|" {
		t.Errorf("wrap = %q", got)
	}
}
