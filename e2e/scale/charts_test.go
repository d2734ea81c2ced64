package scale

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

// chartReport is goodReport with figures that do not print round (a p99
// of 27.123456789 s, 1234 requests over 50 members) and a restart run that
// never recovered.
func chartReport() *Report {
	r := goodReport()
	for i := range r.Runs {
		run := &r.Runs[i]
		switch {
		case run.K == 50 && run.Storm == OnTime && run.Variant == Patched:
			run.Recovery.P99 = 27123456789 * time.Nanosecond
			run.Members.Total = 1234
		case run.K == 50 && run.Storm == OnTime && run.Variant == Restart:
			run.Recovery.P99 = NotRecovered
		}
	}
	return r
}

func readMarks(t *testing.T, path string) []svgchart.Mark {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marks, err := svgchart.Marks(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return marks
}

// markRun is the run a mark stands for, by its series name and data-k.
func markRun(t *testing.T, r *Report, m svgchart.Mark) Run {
	t.Helper()
	k, err := strconv.Atoi(m.Data["k"])
	if err != nil {
		t.Fatalf("mark %+v: data-k: %v", m, err)
	}
	for _, s := range curveSeries {
		if s.name == m.Series {
			run, ok := r.Find(k, s.storm, s.variant)
			if !ok {
				t.Fatalf("mark %+v: the report has no %s run of %s at K = %d", m, s.storm, s.variant, k)
			}
			return run
		}
	}
	t.Fatalf("mark %+v: series %q is none of the curves", m, m.Series)
	return Run{}
}

// The charts Write puts beside scale.md are well-formed, and each point
// is a run's figure: its p99 to the nanosecond, its requests exactly; a
// p99 that did not recover is not drawn but said.
func TestChartsAreTheReportsFigures(t *testing.T) {
	dir := t.TempDir()
	r := chartReport()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	p99 := readMarks(t, filepath.Join(dir, P99Chart))
	// 3 series × 2 K, less the restart run that did not recover.
	if len(p99) != 5 {
		t.Fatalf("%s has %d points, want 5: %+v", P99Chart, len(p99), p99)
	}
	for _, m := range p99 {
		run := markRun(t, r, m)
		got, err := strconv.ParseFloat(m.Data["p99-ms"], 64)
		if err != nil || time.Duration(math.Round(got*float64(time.Millisecond))) != run.Recovery.P99 {
			t.Errorf("%s K=%s: data-p99-ms %q, want %s (%v)", m.Series, m.Data["k"], m.Data["p99-ms"], run.Recovery.P99, err)
		}
		if y, _ := strconv.ParseFloat(m.Data["y"], 64); y != run.Recovery.P99.Seconds() {
			t.Errorf("%s K=%s: drawn at %s s, want %v", m.Series, m.Data["k"], m.Data["y"], run.Recovery.P99.Seconds())
		}
		if !strings.Contains(m.Title, FormatDuration(run.Recovery.P99)) {
			t.Errorf("%s K=%s: title %q lacks %s", m.Series, m.Data["k"], m.Title, FormatDuration(run.Recovery.P99))
		}
	}
	if m := p99[1]; m.Data["p99-ms"] != "27123.456789" {
		t.Errorf("patched K=50: data-p99-ms = %q, want 27123.456789", m.Data["p99-ms"])
	}
	svg, _ := os.ReadFile(filepath.Join(dir, P99Chart))
	if !bytes.Contains(svg, []byte("pristine+restart (workaround) at K = 50: p99 not recovered")) {
		t.Errorf("%s does not say the restart run at K = 50 did not recover:\n%s", P99Chart, svg)
	}

	reqs := readMarks(t, filepath.Join(dir, RequestsChart))
	if len(reqs) != 6 {
		t.Fatalf("%s has %d points, want 6: %+v", RequestsChart, len(reqs), reqs)
	}
	for _, m := range reqs {
		run := markRun(t, r, m)
		if m.Data["requests"] != strconv.Itoa(run.Members.Total) {
			t.Errorf("%s K=%s: data-requests %q, want %d", m.Series, m.Data["k"], m.Data["requests"], run.Members.Total)
		}
		if y, _ := strconv.ParseFloat(m.Data["y"], 64); y != float64(run.Members.Total)/float64(run.K) {
			t.Errorf("%s K=%s: drawn at %s per member, want %d / %d", m.Series, m.Data["k"], m.Data["y"], run.Members.Total, run.K)
		}
	}

	md, _ := os.ReadFile(filepath.Join(dir, "scale.md"))
	for _, f := range []string{P99Chart, RequestsChart} {
		if !bytes.Contains(md, []byte("]("+f+")")) {
			t.Errorf("scale.md does not link %s", f)
		}
	}
}

// The same report gives the same bytes: the charts are kept with the
// report and compared between runs.
func TestChartsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := chartReport().Write(a); err != nil {
		t.Fatal(err)
	}
	if err := chartReport().Write(b); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{P99Chart, RequestsChart} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes of one report (%d and %d bytes)", f, len(x), len(y))
		}
	}
}

// A report with no run to draw writes no chart, links none, and removes
// the charts of the report it replaces, which would otherwise sit beside
// it as if they were its own.
func TestNoRunsNoCharts(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{P99Chart, RequestsChart} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &Report{StatusPeriod: 10 * time.Second, Ks: []int{100}}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{P99Chart, RequestsChart} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s of the old report is still there (%v)", f, err)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(dir, "scale.md")); bytes.Contains(md, []byte(".svg")) {
		t.Errorf("scale.md links a chart that was not written:\n%s", md)
	}
}

// Only a p99 that never recovered leaves the p99 chart without that
// series, not drawn at MaxInt64 nanoseconds.
func TestOnlyNotRecovered(t *testing.T) {
	r := &Report{StatusPeriod: 10 * time.Second, Ks: []int{100}}
	run := run(100, OnTime, Restart, 0, 500, 10, Credentials{Component: ControllerManager})
	run.Recovery = Summarize([]time.Duration{NotRecovered})
	r.Runs = []Run{run}
	figs := r.figures()
	if len(figs) != 1 || figs[0].file != RequestsChart {
		t.Fatalf("figures = %+v, want only the requests chart", figs)
	}
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "scale.md"))
	if bytes.Contains(md, []byte(P99Chart)) || !bytes.Contains(md, []byte(RequestsChart)) {
		t.Errorf("scale.md links the wrong charts:\n%s", md)
	}
}
