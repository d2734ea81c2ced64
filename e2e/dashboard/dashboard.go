package dashboard

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// File is the dashboard, relative to the repository root.
const File = "docs/dashboards/holdfast.json"

// Query is one query of the dashboard and the names it uses.
type Query struct {
	Panel, RefID, Expr string
	// Metrics are the metric names the expression selects.
	Metrics []string
	// Labels are the label names it groups by (by, without, on, ignoring),
	// matches on in a selector, or names in its legend ({{label}}).
	Labels []string
}

// Load reads the dashboard at path (File under the repository root).
func Load(path string) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	qs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

// Parse reads a Grafana dashboard's queries, those of collapsed rows too.
// A dashboard with no query is an error: a check against it would pass
// having checked nothing.
func Parse(data []byte) ([]Query, error) {
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	var out []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					continue
				}
				out = append(out, Query{Panel: p.Title, RefID: t.RefID, Expr: t.Expr,
					Metrics: MetricNames(t.Expr), Labels: labelNames(t.Expr, t.LegendFormat)})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		return nil, fmt.Errorf("the dashboard has no query")
	}
	return out, nil
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promSelector = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	promMatcher  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)
	// promIdent is a name with what follows it: a name followed by "(" is
	// a function or an aggregation, not a metric.
	promIdent = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	// promNumber is a number or a duration (offset 1h30m).
	promNumber  = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:e[+-]?\d+)?(?:ms|[smhdwy])?)+\b`)
	legendLabel = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	// promKeywords are PromQL's binary operators and modifiers.
	promKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// MetricNames are the metric names expr selects, in order, each once.
// Strings, label selectors, ranges, grouping clauses and numbers are
// removed first; a name followed by "(" is a function, and keywords are
// not names. Grafana's variables ($__rate_interval) sit in ranges.
func MetricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{promString, promSelector, promRange, promGrouping, promNumber} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, m := range promIdent.FindAllStringSubmatch(expr, -1) {
		if m[1] != "" || slices.Contains(promKeywords, strings.ToLower(m[0])) || slices.Contains(names, m[0]) {
			continue
		}
		names = append(names, m[0])
	}
	return names
}

// labelNames are the labels expr groups by or matches on, and those the
// legend names, each once, sorted.
func labelNames(expr, legend string) []string {
	set := map[string]bool{}
	stripped := promString.ReplaceAllString(expr, `""`)
	for _, m := range promGrouping.FindAllStringSubmatch(stripped, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				set[l] = true
			}
		}
	}
	for _, sel := range promSelector.FindAllString(stripped, -1) {
		for _, m := range promMatcher.FindAllStringSubmatch(sel, -1) {
			set[m[1]] = true
		}
	}
	for _, m := range legendLabel.FindAllStringSubmatch(legend, -1) {
		set[m[1]] = true
	}
	out := make([]string, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// TargetLabels are added to every series by Prometheus (job, instance) and
// by the prometheus-operator's ServiceMonitor and PodMonitor (namespace,
// pod) when it scrapes: a binary's own /metrics never carries them.
var TargetLabels = []string{"job", "instance", "namespace", "pod"}

// Binary is what a binary serves of the dashboard.
type Binary struct {
	Name string
	// Prefixes select the dashboard's metrics the binary serves: a query
	// is the binary's when one of its metrics starts with one of them.
	Prefixes []string
	// AfterEvent are the families whose series the binary creates only
	// when something happens (a label value known only then, such as a
	// failure's reason), each with what that is. client_golang leaves a
	// family without series out of /metrics, its HELP line too, so such a
	// family is checked only when present: its labels then, its absence
	// never (Report.NotYet).
	AfterEvent map[string]string
}

// The binaries the suites scrape.
var (
	// Karmada is a patched karmada-controller-manager, karmada-search or
	// karmada-metrics-adapter: pkg/membercred's member-credential families,
	// labelled by cluster and created at a cluster's first token read, and
	// the own-credential guard's, unlabelled and served from the start.
	Karmada = Binary{Name: "Karmada", Prefixes: []string{"holdfast_member_credential_", "holdfast_own_credential_"},
		AfterEvent: map[string]string{
			"holdfast_member_credential_refresh_failures_total":       "a failed read of a member's Secret (its reason label)",
			"holdfast_member_credential_unauthorized_total":           "a member's first 401",
			"holdfast_member_credential_unauthorized_recovered_total": "a member 401 replayed with a re-read token",
			"holdfast_member_credential_unauthorized_persisted_total": "a member 401 the re-read token did not cure",
		}}
	// KubeconfigFollower is a patched karmada-scheduler-estimator or
	// karmada-agent: pkg/membercred's kubeconfig-credential families,
	// labelled by kubeconfig and created at the first read, at start (the
	// agent also serves the own-credential guard's, which Karmada checks).
	KubeconfigFollower = Binary{Name: "karmada-scheduler-estimator, karmada-agent", Prefixes: []string{"holdfast_kubeconfig_credential_"},
		AfterEvent: map[string]string{
			"holdfast_kubeconfig_credential_read_failures_total":          "a failed read of the kubeconfig (its reason label)",
			"holdfast_kubeconfig_credential_unauthorized_total":           "a first 401 to the kubeconfig's credential",
			"holdfast_kubeconfig_credential_unauthorized_recovered_total": "a 401 replayed with a re-read credential",
			"holdfast_kubeconfig_credential_unauthorized_persisted_total": "a 401 the re-read kubeconfig did not cure",
		}}
	// Worker is a patched worker-operator following two hubs: pkg/hubfollow's
	// families (probe errors are created for every hub and reason at
	// start), the own-credential guard's and holdfast_build_info.
	Worker = Binary{Name: "worker-operator", Prefixes: []string{"kubeslice_worker_hub_", "holdfast_own_credential_", "holdfast_build_info"},
		AfterEvent: map[string]string{
			"kubeslice_worker_hub_credential_accepted": "the first probe that reaches a hub",
		}}
)

// Report is what Check found.
type Report struct {
	// Problems are the dashboard's names the scrape lacks, one sentence
	// each, naming the panel and the query.
	Problems []string
	// NotYet are the AfterEvent families the scrape does not hold yet,
	// with the event each waits for: not checked.
	NotYet []string
	// Checked are the families checked, sorted.
	Checked []string
}

// Check matches the binary's queries against scrape (a parsed /metrics:
// the family by name): each of the binary's metrics a query selects must
// be a family of the scrape unless it is an AfterEvent family, and each
// label the query uses, other than TargetLabels, must be on every series
// of every such family present (a vector's series all carry its labels).
// A label the series lack folds a by() into one line, or prints nothing
// in a legend, without an error anywhere.
func Check(queries []Query, scrape map[string]*dto.MetricFamily, b Binary) Report {
	var r Report
	checked, notYet := map[string]bool{}, map[string]bool{}
	for _, q := range queries {
		for _, name := range q.Metrics {
			if !b.serves(name) {
				continue
			}
			where := fmt.Sprintf("panel %q query %s", q.Panel, q.RefID)
			fam, ok := scrape[name]
			if !ok || len(fam.GetMetric()) == 0 {
				if event, after := b.AfterEvent[name]; after {
					notYet[name+" (after "+event+")"] = true
					continue
				}
				r.Problems = append(r.Problems, fmt.Sprintf("%s: %s is not in %s's /metrics", where, name, b.Name))
				continue
			}
			checked[name] = true
			for _, l := range q.Labels {
				if slices.Contains(TargetLabels, l) {
					continue
				}
				if n := without(fam, l); n > 0 {
					r.Problems = append(r.Problems, fmt.Sprintf("%s: label %q is missing from %d of the %d series of %s in %s's /metrics (they carry %s)",
						where, l, n, len(fam.GetMetric()), name, b.Name, labelsOf(fam)))
				}
			}
		}
	}
	r.Checked, r.NotYet = keys(checked), keys(notYet)
	return r
}

func (b Binary) serves(metric string) bool {
	for _, p := range b.Prefixes {
		if strings.HasPrefix(metric, p) {
			return true
		}
	}
	return false
}

// without counts the series of fam that lack label.
func without(fam *dto.MetricFamily, label string) int {
	n := 0
	for _, m := range fam.GetMetric() {
		found := false
		for _, p := range m.GetLabel() {
			if p.GetName() == label {
				found = true
			}
		}
		if !found {
			n++
		}
	}
	return n
}

// labelsOf are the label names on fam's series, sorted, or "no label".
func labelsOf(fam *dto.MetricFamily) string {
	set := map[string]bool{}
	for _, m := range fam.GetMetric() {
		for _, p := range m.GetLabel() {
			set[p.GetName()] = true
		}
	}
	if len(set) == 0 {
		return "no label"
	}
	return strings.Join(keys(set), ", ")
}

func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
