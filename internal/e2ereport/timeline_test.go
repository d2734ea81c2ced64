package e2ereport

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func rotationReport() Report {
	return Report{Suites: []Suite{
		{Suite: "karmada-control-plane", Scenarios: []Scenario{
			{Name: "rotation", Binary: "patched", Result: Pass, Expected: Pass,
				Timings: map[string]time.Duration{"member-restart": ms(1234)},
				Events:  []Event{{EventRotation, ms(12000)}, {EventRecovery, ms(53250)}}},
			{Name: "rotation", Binary: "pristine", Result: RedAsExpected, Expected: RedAsExpected,
				Events: []Event{{EventRotation, ms(9500)}, {EventFirstFailure, ms(11000)}}},
			// On the timeline, but no row marked an event: nothing to draw.
			{Name: "ca-rotation-overlap", Binary: "patched", Result: Pass, Expected: Pass, Timings: map[string]time.Duration{"member-restart": time.Second}},
			// Events, but not on the timeline (the catalogue's choice, not
			// the name's).
			{Name: "propagation", Binary: "patched", Result: Pass, Expected: Pass, Events: []Event{{EventRotation, time.Second}}},
		}},
		{Suite: "worker-hub-failover", Scenarios: []Scenario{
			// A track without a rotation is drawn from the scenario's start.
			{Name: "hub CA rotation: hub-a restarted with a new CA, CA file swapped (..data); reconnects without a restart, then follows failover", Binary: "patched", Result: Pass, Expected: Pass,
				Events: []Event{{EventRecovery, ms(4000)}}},
			// Not on the timeline: it marks no moment of failure.
			{Name: "hub CA rotation (pristine upstream): hub-a restarted with a new CA, CA file swapped (..data)", Binary: "pristine", Result: RedAsExpected, Expected: RedAsExpected,
				Events: []Event{{EventRotation, ms(4000)}}},
		}},
		{Suite: "karmada-search", Scenarios: []Scenario{
			// A search-ca-rotation row whose pristine build marked nothing.
			{Suite: "karmada-control-plane", Name: "search-ca-rotation", Binary: "patched", Result: Pass, Expected: Pass,
				Events: []Event{{EventRotation, ms(100)}, {EventRecovery, ms(100)}}},
			{Suite: "karmada-control-plane", Name: "search-ca-rotation", Binary: "pristine", Result: Fail, Expected: RedAsExpected},
		}},
	}}
}

// One chart per scenario the catalogue puts on a timeline and a row of
// which marked events, a track per build, and a point per event carrying
// the row's figures to the millisecond: its time on the scenario's clock,
// and its position, from the track's rotation.
func TestTimelinesAreTheRowsEvents(t *testing.T) {
	r := rotationReport()
	tls := r.Timelines()
	if len(tls) != 3 {
		t.Fatalf("%d timelines, want rotation, the hub CA rotation and search-ca-rotation: %+v", len(tls), tls)
	}
	if tls[0].File != "e2e-timeline-karmada-control-plane-rotation.svg" ||
		tls[1].File != "e2e-timeline-worker-hub-failover-hub-ca-rotation-hub-a-restarted-with-a-new-ca-ca-file-swappe.svg" ||
		tls[2].File != "e2e-timeline-karmada-control-plane-search-ca-rotation.svg" {
		t.Errorf("files %q, %q, %q", tls[0].File, tls[1].File, tls[2].File)
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
				t.Fatalf("%s: event %+v is of no row", tl.File, m)
			}
			var at, origin time.Duration
			found := false
			for _, e := range sc.Events {
				if e.Name == m.Data["label"] {
					at, found = e.At, true
				}
				if e.Name == EventRotation {
					origin = e.At
				}
			}
			if !found {
				t.Fatalf("%s: event %+v is no event of its row", tl.File, m)
			}
			if m.Kind != "event" || m.Data["at-ms"] != strconv.FormatInt(at.Milliseconds(), 10) {
				t.Errorf("%s: %s of %s: data-at-ms %q, want %d", tl.File, m.Data["label"], m.Data["binary"], m.Data["at-ms"], at.Milliseconds())
			}
			if m.Data["since-rotation-ms"] != strconv.FormatInt((at-origin).Milliseconds(), 10) {
				t.Errorf("%s: %s of %s: data-since-rotation-ms %q, want %d", tl.File, m.Data["label"], m.Data["binary"], m.Data["since-rotation-ms"], (at - origin).Milliseconds())
			}
			if v, _ := strconv.ParseFloat(m.Data["at"], 64); v != (at - origin).Seconds() {
				t.Errorf("%s: %s of %s drawn at %s s, want %v", tl.File, m.Data["label"], m.Data["binary"], m.Data["at"], (at - origin).Seconds())
			}
			if m.Series != sc.Binary+" ("+string(sc.Result)+")" {
				t.Errorf("%s: %s in track %q, want its build's", tl.File, m.Data["label"], m.Series)
			}
			if !strings.Contains(m.Title, formatDuration(at)+" after the scenario began") {
				t.Errorf("%s: title %q lacks the event's time %s", tl.File, m.Title, formatDuration(at))
			}
			drawn++
		}
	}
	if drawn != 7 {
		t.Errorf("%d events drawn, want one per event of the timeline rows (7)", drawn)
	}
	svg, _ := tls[2].SVG()
	if !bytes.Contains(svg, []byte("pristine (fail): no event marked.")) {
		t.Errorf("%s does not say the pristine row marked nothing:\n%s", tls[2].File, svg)
	}
	// The patched recovery is 41.25 s after its rotation, the pristine
	// first failure 1.5 s after its own: both drawn from 0, one axis.
	svg, _ = tls[0].SVG()
	for _, want := range []string{`data-label="recovery" data-at="41.25"`, `data-label="first failure" data-at="1.5"`, `>+41.25s</text>`} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("%s lacks %s:\n%s", tls[0].File, want, svg)
		}
	}
	md := string(r.Markdown())
	for _, tl := range tls {
		if !strings.Contains(md, "]("+tl.File+")") {
			t.Errorf("e2e.md does not link %s:\n%s", tl.File, md)
		}
	}
	if !strings.Contains(md, "| rotation | patched | pass | pass | yes | 0s | member-restart 1.23s<br>rotation at 12s<br>recovery at 53.25s |") {
		t.Errorf("e2e.md does not list the events in the Timings cell:\n%s", md)
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
// text that cannot end the image; an event before the rotation is drawn,
// not refused; two scenarios whose names make one file name get two
// files.
func TestTimelinesHostile(t *testing.T) {
	evil := `rotation <b>&"x</svg>] (y)`
	r := Report{Suites: []Suite{{Suite: `s<&"`, Scenarios: []Scenario{
		{Name: evil, Binary: `p<&"`, Result: Pass, Expected: Pass, Events: []Event{{EventRotation, time.Second}, {`t<&"`, 0}}},
		{Name: `rotation <b>&"x</svg>] [y]`, Binary: "patched", Result: Pass, Expected: Pass, Events: []Event{{"t", time.Second}}},
		{Name: "rotation", Binary: "patched", Result: Pass, Expected: Pass, Events: []Event{{"", time.Second}}},
	}}}}
	all := func(string, string, string) bool { return true }
	tls := r.timelines(all)
	if len(tls) != 3 || tls[0].File == tls[1].File {
		t.Fatalf("timelines %+v, want three files", tls)
	}
	for i, tl := range tls {
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
		if want := len(r.Suites[0].Scenarios[i].Events); len(marks) != want {
			t.Errorf("%s: %d events, want %d", tl.File, len(marks), want)
		}
	}
	svg, _ := tls[0].SVG()
	marks, _ := svgchart.Marks(svg)
	if m := marks[1]; m.Data["binary"] != `p<&"` || m.Data["label"] != `t<&"` || m.Data["at-ms"] != "0" || m.Data["since-rotation-ms"] != "-1000" || m.Data["at"] != "-1" {
		t.Errorf("event %+v, want the names as given, at 0 ms, 1000 ms before the rotation", m)
	}
	if !bytes.Contains(svg, []byte(">-1s</text>")) {
		t.Errorf("the event before the rotation is not labelled -1s:\n%s", svg)
	}
	if got := r.Timelines(); len(got) != 0 {
		t.Errorf("the catalogue holds none of these rows, yet %d timelines", len(got))
	}
	md := string(r.markdownWith(tls))
	if strings.Contains(md, "</svg>") || !strings.Contains(md, `\]`) {
		t.Errorf("a name's markup reached e2e.md unescaped:\n%s", md)
	}
}

// Mark records each event once, the first time, on the scenario's clock,
// in time order; the report's JSON carries them in seconds and reads them
// back.
func TestRunMarksEventsOnOneClock(t *testing.T) {
	rec := NewRecorder(t.TempDir(), "karmada-control-plane")
	t.Run("row", func(t *testing.T) {
		s := rec.Begin(t, Scenario{Name: "rotation", Binary: "patched"})
		began := s.start
		s.MarkAt(EventRecovery, began.Add(ms(5250)))
		s.MarkAt(EventRotation, began.Add(ms(2000)))
		s.MarkAt(EventRecovery, began.Add(ms(9000))) // not the first: ignored
		s.Mark(EventFirstFailure)
		s.PassWithTest()
	})
	if rec.Len() != 1 {
		t.Fatalf("%d rows", rec.Len())
	}
	sc := rec.scenarios[0]
	// Marked last but happened first (now, less than 2 s after Begin).
	if len(sc.Events) != 3 || sc.Events[0].Name != EventFirstFailure || sc.Events[0].At < 0 || sc.Events[0].At > sc.Duration ||
		sc.Events[1] != (Event{EventRotation, ms(2000)}) || sc.Events[2] != (Event{EventRecovery, ms(5250)}) {
		t.Fatalf("events %+v", sc.Events)
	}
	data, err := sc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`{"name":"rotation","atSeconds":2}`)) || !bytes.Contains(data, []byte(`{"name":"recovery","atSeconds":5.25}`)) {
		t.Errorf("JSON %s", data)
	}
	var back Scenario
	if err := back.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if len(back.Events) != 3 || back.Events[1] != sc.Events[1] || back.Events[2] != sc.Events[2] {
		t.Errorf("read back %+v, want %+v", back.Events, sc.Events)
	}
	if !OnTimeline("karmada-control-plane", "rotation", "pristine") || OnTimeline("karmada-control-plane", "propagation", "patched") || OnTimeline("nosuch", "rotation", "patched") {
		t.Error("OnTimeline does not follow the catalogue")
	}
}
