package svgchart

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func timeline() TimelineChart {
	return TimelineChart{Title: "rotation", Unit: "seconds after the rotation",
		Tracks: []Track{
			{Name: "patched (pass)", Events: []Event{
				{Label: "rotation", At: 0, Text: "0s", Title: "rotation at 0s"},
				{Label: "recovery", At: 41.25, Text: "41.25s <&>", Title: "recovery 41.25s after", Attrs: []Attr{{"at-ms", "53250"}}},
			}},
			{Name: "pristine (red-as-expected)", Events: []Event{
				{Label: "rotation", At: 0},
				{Label: "first failure", At: 2.5},
			}},
		},
		Notes: []string{"a note"}}
}

// Every event is read back with its figures, under its track, from a
// document an XML parser accepts; one label keeps one colour in every
// track, and the legend names each label once.
func TestTimelineChartMarksAreTheInput(t *testing.T) {
	svg, err := timeline().SVG()
	if err != nil {
		t.Fatal(err)
	}
	marks, err := Marks(svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
	want := []Mark{
		{Kind: "event", Series: "patched (pass)", Title: "rotation at 0s", Data: map[string]string{"label": "rotation", "at": "0"}},
		{Kind: "event", Series: "patched (pass)", Title: "recovery 41.25s after", Data: map[string]string{"label": "recovery", "at": "41.25", "at-ms": "53250"}},
		{Kind: "event", Series: "pristine (red-as-expected)", Data: map[string]string{"label": "rotation", "at": "0"}},
		{Kind: "event", Series: "pristine (red-as-expected)", Data: map[string]string{"label": "first failure", "at": "2.5"}},
	}
	if len(marks) != len(want) {
		t.Fatalf("read %d marks, want %d:\n%s", len(marks), len(want), svg)
	}
	for i := range want {
		if !sameMark(marks[i], want[i]) {
			t.Errorf("mark %d = %+v, want %+v", i, marks[i], want[i])
		}
	}
	if !bytes.Contains(svg, []byte(`>41.25s &lt;&amp;&gt;</text>`)) {
		t.Errorf("the event's text is not printed, escaped:\n%s", svg)
	}
	fills := map[string]string{}
	for _, m := range regexp.MustCompile(`class="event" cx="[^"]*" cy="[^"]*" r="6" fill="([^"]*)" data-label="([^"]*)"`).FindAllSubmatch(svg, -1) {
		label, fill := string(m[2]), string(m[1])
		if f, ok := fills[label]; ok && f != fill {
			t.Errorf("%s drawn in %s and %s", label, f, fill)
		}
		fills[label] = fill
	}
	if len(fills) != 3 || fills["rotation"] == fills["recovery"] || fills["recovery"] == fills["first failure"] {
		t.Errorf("colours %v, want one per label", fills)
	}
	for _, l := range []string{"rotation", "recovery", "first failure"} {
		if n := bytes.Count(svg, []byte(`dominant-baseline="middle">`+l+`</text></g>`)); n != 1 {
			t.Errorf("the legend names %s %d times", l, n)
		}
	}
	for _, text := range []string{"seconds after the rotation", "a note"} {
		if !bytes.Contains(svg, []byte(text)) {
			t.Errorf("the SVG lacks %q", text)
		}
	}
}

// An event's position is its time on the one axis of every track: equal
// times are drawn at one x, and the span of a track runs from its first
// event to its last.
func TestTimelineChartOneAxis(t *testing.T) {
	svg, err := timeline().SVG()
	if err != nil {
		t.Fatal(err)
	}
	cx := map[string][]float64{}
	for _, m := range regexp.MustCompile(`class="event" cx="([^"]*)"[^>]*data-label="([^"]*)"`).FindAllSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		cx[string(m[2])] = append(cx[string(m[2])], x)
	}
	if len(cx["rotation"]) != 2 || cx["rotation"][0] != cx["rotation"][1] {
		t.Errorf("the two rotations (both at 0) drawn at x %v", cx["rotation"])
	}
	if !(cx["rotation"][0] < cx["first failure"][0] && cx["first failure"][0] < cx["recovery"][0]) {
		t.Errorf("x positions %v not in time order", cx)
	}
	spans := regexp.MustCompile(`class="span" x1="([^"]*)" y1="[^"]*" x2="([^"]*)"`).FindAllSubmatch(svg, -1)
	if len(spans) != 2 || string(spans[0][1]) != strconv.FormatFloat(cx["rotation"][0], 'f', -1, 64) || string(spans[0][2]) != strconv.FormatFloat(cx["recovery"][0], 'f', -1, 64) {
		t.Errorf("spans %q, want the patched one from its rotation to its recovery", spans)
	}
}

func TestTimelineChartDeterministicAndHostile(t *testing.T) {
	a, _ := timeline().SVG()
	b, _ := timeline().SVG()
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("two renderings of one timeline differ")
	}
	evil := `a<b>&"c'</svg><script>x</script>` + "\x01"
	c := TimelineChart{Title: evil, Unit: evil, Notes: []string{evil},
		Tracks: []Track{{Name: evil, Events: []Event{{Label: evil, At: -1, Text: evil, Title: evil, Attrs: []Attr{{evil, evil}}}}}}}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	marks, err := Marks(svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, svg)
	}
	if bytes.Contains(svg, []byte("<script")) || len(marks) != 1 || !strings.HasPrefix(marks[0].Data["label"], `a<b>&"c'`) || marks[0].Data["at"] != "-1" {
		t.Errorf("marks %+v:\n%s", marks, svg)
	}
}

func TestTimelineChartUndrawable(t *testing.T) {
	for name, c := range map[string]TimelineChart{
		"no track":    {Title: "t"},
		"empty track": {Title: "t", Tracks: []Track{{Name: "patched"}}},
		"NaN":         {Title: "t", Tracks: []Track{{Name: "patched", Events: []Event{{Label: "x", At: math.NaN()}}}}},
		"-Inf":        {Title: "t", Tracks: []Track{{Name: "patched", Events: []Event{{Label: "x", At: math.Inf(-1)}}}}},
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
}
