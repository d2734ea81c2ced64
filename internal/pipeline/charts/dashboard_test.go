package charts

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// Dashboard is holdfast's Grafana dashboard, relative to the repository
// root; the worker chart carries a copy (WorkerOperatorDashboard), and
// patch 0003 of the Karmada chart adds one (karmadaChartDashboard), because
// a chart packages only files under its own directory.
const (
	Dashboard               = "docs/dashboards/holdfast.json"
	WorkerOperatorDashboard = WorkerOperatorDir + "/dashboards/holdfast.json"
)

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string           `json:"uid"`
	Title      string           `json:"title"`
	ID         *int             `json:"id"`
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type dashboardPanel struct {
	ID         int              `json:"id"`
	Type       string           `json:"type"`
	Title      string           `json:"title"`
	Datasource *datasourceRef   `json:"datasource"`
	Panels     []dashboardPanel `json:"panels"` // a collapsed row's
	Targets    []struct {
		RefID        string         `json:"refId"`
		Expr         string         `json:"expr"`
		LegendFormat string         `json:"legendFormat"`
		Datasource   *datasourceRef `json:"datasource"`
	} `json:"targets"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// allPanels flattens rows.
func (d dashboard) allPanels() []dashboardPanel {
	var all []dashboardPanel
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return all
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), Dashboard))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", Dashboard, err)
	}
	return d
}

var overlayMetricName = regexp.MustCompile(`Name:\s*"((?:holdfast|kubeslice_worker_hub)_[a-z_]+)"`)

// overlayMetrics are the metric names the overlays (glue compiled into the
// upstream binaries) register themselves, such as the worker's
// holdfast_build_info, read from their source.
func overlayMetrics(t *testing.T) []string {
	t.Helper()
	var names []string
	root := filepath.Join(repoRoot(t), "overlay")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range overlayMetricName.FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "holdfast_build_info") {
		t.Fatalf("no holdfast_build_info among the overlays' metrics %q", names)
	}
	return names
}

var (
	hubfollowLabelList = regexp.MustCompile(`\[\]string\{("[a-z_]+"(?:,\s*"[a-z_]+")*)\}`)
	overlayConstLabels = regexp.MustCompile(`prometheus\.Labels\{([^}]*)\}`)
	quotedKey          = regexp.MustCompile(`"([a-z_]+)"\s*:`)
	quotedName         = regexp.MustCompile(`"([a-z_]+)"`)
)

// targetLabels are what Prometheus adds to every scraped series (the
// prometheus-operator's ServiceMonitor and PodMonitor set namespace and pod).
var targetLabels = []string{"job", "instance", "namespace", "pod"}

// exportedLabels are the label names of the exported metrics:
// pkg/membercred's as registered, pkg/hubfollow's label lists and the
// overlays' constant labels as written in their source, plus targetLabels.
func exportedLabels(t *testing.T) []string {
	t.Helper()
	var r recorder
	if _, err := membercred.NewMetrics(&r); err != nil {
		t.Fatal(err)
	}
	if _, err := membercred.NewKubeconfigMetrics(&r); err != nil {
		t.Fatal(err)
	}
	labels := append(slices.Clone(targetLabels), r.labels...)
	read := func(path string) string {
		data, err := os.ReadFile(filepath.Join(repoRoot(t), path))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, m := range hubfollowLabelList.FindAllStringSubmatch(read("pkg/hubfollow/metrics.go"), -1) {
		for _, q := range quotedName.FindAllStringSubmatch(m[1], -1) {
			labels = append(labels, q[1])
		}
	}
	for _, m := range overlayConstLabels.FindAllStringSubmatch(read("overlay/workeroperator/holdfast_version.go"), -1) {
		for _, q := range quotedKey.FindAllStringSubmatch(m[1], -1) {
			labels = append(labels, q[1])
		}
	}
	for _, want := range []string{"cluster", "reason", "hub", "state", "version"} {
		if !slices.Contains(labels, want) {
			t.Fatalf("exported labels %q lack %s: the source moved, update this test", labels, want)
		}
	}
	slices.Sort(labels)
	return slices.Compact(labels)
}

var (
	dashboardGrouping = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	legendLabel       = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
)

// TestDashboardLabelsExist: every label a query groups by and every label a
// legend names is one the series carry: a misspelt label in by() folds
// every series into one, and in a legend prints nothing, without an error.
func TestDashboardLabelsExist(t *testing.T) {
	d := readDashboard(t)
	labels := exportedLabels(t)
	for _, p := range d.allPanels() {
		for _, target := range p.Targets {
			var used []string
			for _, m := range dashboardGrouping.FindAllStringSubmatch(target.Expr, -1) {
				for _, l := range strings.Split(m[1], ",") {
					used = append(used, strings.TrimSpace(l))
				}
			}
			for _, m := range legendLabel.FindAllStringSubmatch(target.LegendFormat, -1) {
				used = append(used, m[1])
			}
			for _, l := range used {
				if !slices.Contains(labels, l) {
					t.Errorf("panel %q query %s uses label %q, which no exported series carries (%s)", p.Title, target.RefID, l, strings.Join(labels, ", "))
				}
			}
		}
	}
}

// exportedMetrics are the holdfast_* and kubeslice_worker_hub_* names the
// binaries export: pkg/membercred's (Karmada and the worker's guard),
// pkg/hubfollow's (the worker) and the overlays' own.
func exportedMetrics(t *testing.T) []string {
	t.Helper()
	names := append(append(membercredMetrics(t), hubfollowMetrics(t)...), overlayMetrics(t)...)
	slices.Sort(names)
	return slices.Compact(names)
}

// TestDashboardQueriesExportedMetrics: every query of the dashboard selects
// only metrics a holdfast binary exports (a panel on a name nobody exports
// stays empty for ever), and every exported series is on some panel.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	d := readDashboard(t)
	exported := exportedMetrics(t)
	shown := map[string]bool{}
	queries := 0
	for _, p := range d.allPanels() {
		for _, target := range p.Targets {
			queries++
			names := metricNames(target.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q query %s: no metric in %q", p.Title, target.RefID, target.Expr)
			}
			for _, n := range names {
				if !slices.Contains(exported, n) {
					t.Errorf("panel %q query %s selects %s, which no holdfast binary exports (%s)", p.Title, target.RefID, n, strings.Join(exported, ", "))
				}
				shown[n] = true
			}
		}
	}
	if queries == 0 {
		t.Fatal("the dashboard has no query")
	}
	for _, n := range exported {
		if !shown[n] {
			t.Errorf("%s is exported but on no panel of %s", n, Dashboard)
		}
	}
}

// TestDashboardIsImportable: the dashboard imports anywhere. It has a
// fixed uid and no numeric id (Grafana assigns one; a stale id overwrites
// another dashboard), and every panel and query reads the Prometheus data
// source the user picks in its one variable, never one of the author's.
func TestDashboardIsImportable(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" || d.ID != nil {
		t.Errorf("uid %q, title %q, id %v: want a uid, a title and a null id", d.UID, d.Title, d.ID)
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("templating %+v, want the one Prometheus data source variable, datasource", d.Templating.List)
	}
	want := datasourceRef{Type: "prometheus", UID: "${datasource}"}
	ids := map[int]bool{}
	for _, p := range d.allPanels() {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || *p.Datasource != want {
			t.Errorf("panel %q: datasource %+v, want %+v", p.Title, p.Datasource, want)
		}
		for _, target := range p.Targets {
			if target.Datasource == nil || *target.Datasource != want {
				t.Errorf("panel %q query %s: datasource %+v, want %+v", p.Title, target.RefID, target.Datasource, want)
			}
		}
	}
}

// TestDashboardChartCopyIsTheDocs: the worker chart ships the dashboard of
// docs/, byte for byte.
func TestDashboardChartCopyIsTheDocs(t *testing.T) {
	root := repoRoot(t)
	docs, err := os.ReadFile(filepath.Join(root, Dashboard))
	if err != nil {
		t.Fatal(err)
	}
	chart, err := os.ReadFile(filepath.Join(root, WorkerOperatorDashboard))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, chart) {
		t.Errorf("%s differs from %s: cp %s %s", WorkerOperatorDashboard, Dashboard, Dashboard, WorkerOperatorDashboard)
	}
}

// karmadaChartDashboard is the Karmada chart's copy of the dashboard, a new
// file of patch 0003, relative to the Karmada tree.
const karmadaChartDashboard = "charts/karmada/dashboards/holdfast.json"

// TestDashboardKarmadaChartCopyIsTheDocs: patch 0003 adds the dashboard of
// docs/ to the Karmada chart byte for byte, so a change to the dashboard
// that skips the patch fails here rather than shipping a stale copy.
func TestDashboardKarmadaChartCopyIsTheDocs(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join(repoRoot(t), Dashboard))
	if err != nil {
		t.Fatal(err)
	}
	if chart := karmadaChartPatchFile(t, karmadaChartDashboard); chart != string(docs) {
		t.Errorf("%s's %s differs from %s: regenerate that file's hunk from %s", karmadaChartPatch, karmadaChartDashboard, Dashboard, Dashboard)
	}
}
