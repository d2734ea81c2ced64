package scale

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/holdfast-dist/holdfast/internal/svgchart"
)

// The pictures Write puts beside scale.md, which links them.
const (
	P99Chart      = "scale-p99.svg"
	RequestsChart = "scale-requests.svg"
)

// curveSeries are the lines of both charts: the on-time storm of the
// builds the targets compare, and the control, what a restart with
// nothing rotated costs on its own.
var curveSeries = []struct {
	name    string
	storm   Storm
	variant Variant
}{
	{"patched", OnTime, Patched},
	{"pristine+restart (workaround)", OnTime, Restart},
	{"control (nothing rotated), patched", Control, Patched},
}

type figure struct {
	file, alt string
	chart     svgchart.LineChart
}

// figures are the charts the report has points for; one with none is left
// out (and its file removed by Write), rather than drawn empty.
func (r *Report) figures() []figure {
	ks := slices.Sorted(slices.Values(r.Ks))
	p99 := svgchart.LineChart{
		Title:  "Recovery p99 against K (on-time storm)",
		XLabel: "K (member clusters)",
		YLabel: "p99 time to recover (s)",
	}
	reqs := svgchart.LineChart{
		Title:  "Member kube-apiserver requests per member over the window",
		XLabel: "K (member clusters)",
		YLabel: "requests per member (audit log)",
	}
	for _, s := range curveSeries {
		var pp, rp []svgchart.Point
		for _, k := range ks {
			run, ok := r.Find(k, s.storm, s.variant)
			if !ok {
				continue
			}
			if d := run.Recovery.P99; d == NotRecovered {
				// NotRecovered is MaxInt64 nanoseconds: drawn, it would
				// flatten every other point to the axis.
				p99.Notes = append(p99.Notes, fmt.Sprintf("%s at K = %d: p99 not recovered within %s (not drawn)", s.name, k, FormatDuration(run.Timeout)))
			} else {
				pp = append(pp, svgchart.Point{X: float64(k), Y: d.Seconds(),
					Title: fmt.Sprintf("%s, K = %d: p99 %s", s.name, k, FormatDuration(d)),
					Attrs: []svgchart.Attr{{Name: "k", Value: strconv.Itoa(k)}, {Name: "p99-ms", Value: ms(d)}}})
			}
			per := float64(run.Members.Total) / float64(max(k, 1))
			rp = append(rp, svgchart.Point{X: float64(k), Y: per,
				Title: fmt.Sprintf("%s, K = %d: %d requests, %s per member", s.name, k, run.Members.Total, strconv.FormatFloat(per, 'f', 1, 64)),
				Attrs: []svgchart.Attr{{Name: "k", Value: strconv.Itoa(k)}, {Name: "requests", Value: strconv.Itoa(run.Members.Total)}}})
		}
		if len(pp) > 0 {
			p99.Series = append(p99.Series, svgchart.Series{Name: s.name, Points: pp})
		}
		if len(rp) > 0 {
			reqs.Series = append(reqs.Series, svgchart.Series{Name: s.name, Points: rp})
		}
	}
	var out []figure
	if len(p99.Series) > 0 {
		out = append(out, figure{P99Chart, "recovery p99 against K: patched, the restart workaround and the control", p99})
	}
	if len(reqs.Series) > 0 {
		out = append(out, figure{RequestsChart, "member kube-apiserver requests per member against K", reqs})
	}
	return out
}

// ms is d in milliseconds, as exactly as a float64 prints it.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// writeCharts writes the figures into dir and removes a chart's file the
// report has no points for, so that no picture of an older report sits
// beside this scale.md.
func (r *Report) writeCharts(dir string) error {
	have := map[string]bool{}
	for _, f := range r.figures() {
		svg, err := f.chart.SVG()
		if err != nil {
			return fmt.Errorf("drawing %s: %w", f.file, err)
		}
		if err := writeAside(dir, f.file, svg); err != nil {
			return err
		}
		have[f.file] = true
	}
	for _, name := range []string{P99Chart, RequestsChart} {
		if have[name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
