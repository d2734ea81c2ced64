package e2ereport

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

func rotationReport() Report {
	return Report{Suites: []Suite{
		{Suite: "karmada-control-plane", Scenarios: []Scenario{
			{Name: "rotation", Binary: "patched", Result: Pass, Expected: Pass, Timings: map[string]time.Duration{
				"member-restart": 1234 * time.Millisecond, "restart-to-recovered": 2500 * time.Millisecond, "blind-window": 7 * time.Millisecond}},
			{Name: "rotation", Binary: "pristine", Result: RedAsExpected, Expected: RedAsExpected, Timings: map[string]time.Duration{
				"member-restart": 1300 * time.Millisecond}},
			// No timing: nothing to draw.
			{Name: "ca-rotation-overlap", Binary: "patched", Result: Pass, Expected: Pass},
			// Not a rotation.
			{Name: "propagation", Binary: "patched", Result: Pass, Expected: Pass, Timings: map[string]time.Duration{"first-propagation": time.Second}},
		}},
		{Suite: "node", Scenarios: []Scenario{
			{Name: "Rotation through the deployed chart: member1's token rotated", Binary: "patched", Result: Pass, Expected: Pass,
				Timings: map[string]time.Duration{"rotation-and-restart": 90 * time.Second}},
		}},
	}}
}

// One chart per rotation scenario with a timing, a lane per build, and a
// bar per timing carrying the row's figure to the millisecond.
func TestTimelinesAreTheRowsTimings(t *testing.T) {
	r := rotationReport()
	tls := r.Timelines()
	if len(tls) != 2 {
		t.Fatalf("%d timelines, want the two rotation scenarios with timings: %+v", len(tls), tls)
	}
	if tls[0].File != "e2e-timeline-karmada-control-plane-rotation.svg" || tls[1].File != "e2e-timeline-node-rotation-through-the-deployed-chart-member1-s-token-rotated.svg" {
		t.Errorf("files %q, %q", tls[0].File, tls[1].File)
	}
	rows := map[string]Scenario{}
	for _, sc := range r.rows() {
		rows[sc.Suite+"/"+sc.Name+"/"+sc.Binary] = sc
	}
	drawn := 0
	for _, tl := range tls {
		svg, err := tl.SVG()
		if err != nil {
			t.Fatal(err)
		}
		marks, err := svgchart.Marks(svg)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tl.File, err, svg)
		}
		for _, m := range marks {
			sc, ok := rows[tl.Suite+"/"+tl.Scenario+"/"+m.Data["binary"]]
			if !ok {
				t.Fatalf("%s: bar %+v is of no row", tl.File, m)
			}
			want, ok := sc.Timings[m.Data["label"]]
			if !ok {
				t.Fatalf("%s: bar %+v is no timing of its row", tl.File, m)
			}
			if got, err := strconv.ParseInt(m.Data["ms"], 10, 64); err != nil || time.Duration(got)*time.Millisecond != want {
				t.Errorf("%s: bar %s of %s: data-ms %q, want %d", tl.File, m.Data["label"], m.Data["binary"], m.Data["ms"], want.Milliseconds())
			}
			if v, _ := strconv.ParseFloat(m.Data["value"], 64); v != want.Seconds() {
				t.Errorf("%s: bar %s drawn at %s s, want %v", tl.File, m.Data["label"], m.Data["value"], want.Seconds())
			}
			if !strings.HasPrefix(m.Series, sc.Binary+" (") {
				t.Errorf("%s: bar %s in lane %q, want its build's", tl.File, m.Data["label"], m.Series)
			}
			drawn++
		}
	}
	if drawn != 5 {
		t.Errorf("%d bars drawn, want one per timing of the rotation rows (5)", drawn)
	}
	md := string(r.Markdown())
	for _, tl := range tls {
		if !strings.Contains(md, "]("+tl.File+")") {
			t.Errorf("e2e.md does not link %s:\n%s", tl.File, md)
		}
	}
}

func TestTimelinesDeterministic(t *testing.T) {
	a, b := rotationReport().Timelines(), rotationReport().Timelines()
	for i := range a {
		x, _ := a[i].SVG()
		y, _ := b[i].SVG()
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renderings", a[i].File)
		}
	}
}

// A name is any text: it reaches the SVG escaped and the Markdown as alt
// text that cannot end the image; a negative timing is drawn, not refused;
// two scenarios whose names make one file name get two files.
func TestTimelinesHostile(t *testing.T) {
	evil := `rotation <b>&"x</svg>] (y)`
	r := Report{Suites: []Suite{{Suite: `s<&"`, Scenarios: []Scenario{
		{Name: evil, Binary: `p<&"`, Result: Pass, Expected: Pass, Timings: map[string]time.Duration{`t<&"`: -time.Second}},
		{Name: `rotation <b>&"x</svg>] [y]`, Binary: "patched", Result: Pass, Expected: Pass, Timings: map[string]time.Duration{"t": time.Second}},
		{Name: "rotation", Binary: "patched", Result: Pass, Expected: Pass, Timings: map[string]time.Duration{"": time.Second}},
	}}}}
	tls := r.Timelines()
	if len(tls) != 3 || tls[0].File == tls[1].File {
		t.Fatalf("timelines %+v, want three files", tls)
	}
	for _, tl := range tls {
		if strings.ContainsAny(tl.File, `<&" /]`) {
			t.Errorf("file name %q", tl.File)
		}
		svg, err := tl.SVG()
		if err != nil {
			t.Fatal(err)
		}
		marks, err := svgchart.Marks(svg)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tl.File, err, svg)
		}
		if len(marks) != 1 {
			t.Errorf("%s: %d bars, want 1", tl.File, len(marks))
		}
	}
	svg, _ := tls[0].SVG()
	marks, _ := svgchart.Marks(svg)
	if m := marks[0]; m.Data["binary"] != `p<&"` || m.Data["label"] != `t<&"` || m.Data["ms"] != "-1000" {
		t.Errorf("bar %+v, want the names as given and -1000 ms", m)
	}
	md := string(r.Markdown())
	if strings.Contains(md, "</svg>") || !strings.Contains(md, `\]`) {
		t.Errorf("a name's markup reached e2e.md unescaped:\n%s", md)
	}
}
