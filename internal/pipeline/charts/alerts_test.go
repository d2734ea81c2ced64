package charts

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// KarmadaPrometheusRule is the standalone rule for the Karmada binaries,
// relative to the repository root; patch 0003's template renders the same
// rules in the Karmada chart.
const KarmadaPrometheusRule = "docs/alerts/karmada-prometheusrule.yaml"

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule
// the tests read.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

func parseRule(t *testing.T, data []byte) prometheusRule {
	t.Helper()
	var r prometheusRule
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		t.Fatalf("PrometheusRule: %v\n%s", err, data)
	}
	if r.APIVersion != "monitoring.coreos.com/v1" || r.Kind != "PrometheusRule" {
		t.Fatalf("%s/%s, want monitoring.coreos.com/v1 PrometheusRule", r.APIVersion, r.Kind)
	}
	return r
}

// alerts maps each alert of r to its expression.
func (r prometheusRule) alerts() map[string]string {
	m := map[string]string{}
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			m[rule.Alert] = rule.Expr
		}
	}
	return m
}

var (
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promNumbers  = regexp.MustCompile(`\b[0-9][0-9.]*[a-z]*\b`)
	promName     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promKeywords = []string{"and", "or", "unless", "bool", "offset"}
)

// metricNames lists the metric names a PromQL expression selects: every
// identifier that is not a function or aggregation (followed by "("), a
// keyword, a label in by/without/on/ignoring, a label matcher, a range or a
// number or duration.
func metricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{promStrings, promMatchers, promGrouping, promNumbers} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, m := range promName.FindAllStringSubmatch(expr, -1) {
		if m[1] != "" || slices.Contains(promKeywords, m[0]) {
			continue
		}
		names = append(names, m[0])
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`kubeslice_worker_hub_credential_accepted{hub="secondary"} == 0`:                                                       {"kubeslice_worker_hub_credential_accepted"},
		`sum by (hub) (increase(kubeslice_worker_hub_probe_errors_total{reason=~"unreachable|timeout"}[30m])) > 150`:           {"kubeslice_worker_hub_probe_errors_total"},
		`increase(a_total[5m]) > 0 and on (cluster) b == 1 unless sum without (x, y) (rate(c{l="x}"}[1h] offset 5m)) > bool 2`: {"a_total", "b", "c"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

// recorder is a prometheus.Registerer that keeps the names of what is
// registered on it, whether or not a vector has a series yet.
type recorder struct{ names, labels []string }

var (
	descName   = regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels = regexp.MustCompile(`constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}`)
)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil {
			r.names = append(r.names, m[1])
		}
		if m := descLabels.FindStringSubmatch(d.String()); m != nil {
			for _, pair := range strings.Split(m[1], ",") {
				if name, _, ok := strings.Cut(pair, "="); ok {
					r.labels = append(r.labels, name)
				}
			}
			for _, name := range strings.Split(m[2], ",") {
				if name != "" {
					r.labels = append(r.labels, name)
				}
			}
		}
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// membercredMetrics are the names pkg/membercred registers: what the
// Karmada binaries (and the worker's own-credential guard) export.
func membercredMetrics(t *testing.T) []string {
	t.Helper()
	var r recorder
	if _, err := membercred.NewMetrics(&r); err != nil {
		t.Fatal(err)
	}
	// The estimator's and the agent's followed kubeconfig.
	if _, err := membercred.NewKubeconfigMetrics(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.names) == 0 {
		t.Fatal("membercred registered no metric")
	}
	return r.names
}

// hubfollowMetrics are the metric-name constants of pkg/hubfollow, read
// from its source: the package registers them only once a worker follows
// two real hubs, and exports no list.
func hubfollowMetrics(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(repoRoot(t), "pkg", "hubfollow", "metrics.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "metric") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				names = append(names, s)
			}
		}
		return true
	})
	if len(names) != 5 {
		t.Fatalf("found metric constants %q in %s, want hubfollow's five", names, path)
	}
	return names
}

// checkExported fails for an expression selecting a metric the binaries do
// not export: an alert on a name nobody exports never fires.
func checkExported(t *testing.T, r prometheusRule, exported []string) {
	t.Helper()
	for alert, expr := range r.alerts() {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", alert, expr)
		}
		for _, n := range names {
			if !slices.Contains(exported, n) {
				t.Errorf("%s selects %s, which no holdfast binary exports (%s)", alert, n, strings.Join(exported, ", "))
			}
		}
	}
}

// RunbookBaseURL is where the runbook_url of every alert holdfast ships
// points, followed by #<alert name in lower case>: GitHub's anchor of the
// alert's "## <alert name>" section in docs/runbooks.md. The worker chart's
// metrics.prometheusRule.runbookBaseURL defaults to it.
const RunbookBaseURL = "https://github.com/holdfast-dist/holdfast/blob/main/docs/runbooks.md"

// runbookSections lists the "## " headings of docs/runbooks.md.
func runbookSections(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)$`).FindAllStringSubmatch(string(data), -1) {
		names = append(names, m[1])
	}
	return names
}

// membercredReasons are the values of the Reason* string constants declared
// in the named files of pkg/membercred, read from the source so that a
// reason added there is one the alerts' test knows about.
func membercredReasons(t *testing.T, files ...string) []string {
	t.Helper()
	var reasons []string
	for _, name := range files {
		path := filepath.Join(repoRoot(t), "pkg", "membercred", name)
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							reasons = append(reasons, s)
						}
					}
				}
			}
		}
	}
	if len(reasons) == 0 {
		t.Fatalf("no Reason constant in pkg/membercred/%s", strings.Join(files, ", "))
	}
	return reasons
}

// memberFailureReasons are the reasons a member cluster's Secret read
// records on holdfast_member_credential_refresh_failures_total: the token's
// (secret.go) and the CA bundle's (cabundle.go). The kubeconfig and CA-file
// reasons go to no metric a Karmada binary exports.
func memberFailureReasons(t *testing.T) []string {
	return membercredReasons(t, "secret.go", "cabundle.go")
}

var reasonMatcher = regexp.MustCompile(`\breason\s*(=~|!~|!=|=)\s*"([^"]*)"`)

// equalReasons are the values an expression selects with reason="..." or
// reason=~"a|b"; negative matchers select no one reason and are refused.
func equalReasons(t *testing.T, alert, expr string) []string {
	t.Helper()
	var reasons []string
	for _, m := range reasonMatcher.FindAllStringSubmatch(expr, -1) {
		switch m[1] {
		case "=":
			reasons = append(reasons, m[2])
		case "=~":
			reasons = append(reasons, strings.Split(m[2], "|")...)
		default:
			t.Errorf("%s: %s%s%q selects reasons nobody named: name each", alert, "reason", m[1], m[2])
		}
	}
	return reasons
}

func TestEqualReasons(t *testing.T) {
	got := equalReasons(t, "x", `sum by (reason) (increase(a{reason="not_found",cluster!="c"}[5m])) or b{reason=~"get_error|nil_secret"}`)
	if want := []string{"not_found", "get_error", "nil_secret"}; !slices.Equal(got, want) {
		t.Errorf("equalReasons = %q, want %q", got, want)
	}
}

// TestKarmadaPrometheusRule: the standalone rule pages for the
// own-credential guard and for every reason a member credential fails, each
// reason by an alert of its own (the fixes differ); every alert waits a
// for:, links its runbook and selects only metrics and reasons
// pkg/membercred really records.
func TestKarmadaPrometheusRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	r := parseRule(t, data)
	got := r.alerts()
	for name, expr := range map[string]string{
		"KarmadaMemberCredentialRejected":  "increase(holdfast_member_credential_unauthorized_persisted_total[10m]) > 0",
		"KarmadaOwnCredentialRejected":     "holdfast_own_credential_persisting_unauthorized > 0",
		"KarmadaOwnCredentialGuardTripped": "increase(holdfast_own_credential_guard_tripped_total[30m]) > 0",
	} {
		if got[name] != expr {
			t.Errorf("%s: expr %q, want %q", name, got[name], expr)
		}
	}
	checkExported(t, r, membercredMetrics(t))

	// refresh_failures_total is the only metric with a reason label the
	// Karmada binaries export, so its reasons are the only ones to select.
	known := memberFailureReasons(t)
	byReason := map[string][]string{}
	for alert, expr := range got {
		for _, reason := range equalReasons(t, alert, expr) {
			if !slices.Contains(known, reason) {
				t.Errorf("%s selects reason %q, which pkg/membercred never records on a member (%s)", alert, reason, strings.Join(known, ", "))
			}
			byReason[reason] = append(byReason[reason], alert)
		}
	}
	for _, reason := range known {
		if alerts := byReason[reason]; len(alerts) != 1 {
			t.Errorf("reason %q is selected by %q, want exactly one alert of its own", reason, alerts)
		}
	}
	checkRunbooks(t, r)
}

// checkRunbooks: every alert of r waits a for: (one bad scrape or one
// failed read pages nobody) and its runbook_url is its own section of
// docs/runbooks.md, which exists: a page that links nowhere helps nobody
// at 3 a.m.
func checkRunbooks(t *testing.T, r prometheusRule) {
	t.Helper()
	sections := runbookSections(t)
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if d, err := time.ParseDuration(rule.For); err != nil || d <= 0 {
				t.Errorf("%s: for: %q, want a positive duration", rule.Alert, rule.For)
			}
			if got, want := rule.Annotations["runbook_url"], RunbookBaseURL+"#"+strings.ToLower(rule.Alert); got != want {
				t.Errorf("%s: runbook_url %q, want %q", rule.Alert, got, want)
			}
			if !slices.Contains(sections, rule.Alert) {
				t.Errorf("%s: docs/runbooks.md has no section %q", rule.Alert, "## "+rule.Alert)
			}
		}
	}
}

// TestRunbooksAreAlerts: every section of docs/runbooks.md is an alert
// holdfast ships, so a renamed alert leaves no stale runbook behind.
func TestRunbooksAreAlerts(t *testing.T) {
	root := repoRoot(t)
	var shipped string
	for _, path := range []string{filepath.Join(WorkerOperatorDir, "templates", "prometheusrule.yaml"), KarmadaPrometheusRule, karmadaChartPatch} {
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		shipped += string(data)
	}
	for _, name := range runbookSections(t) {
		if !regexp.MustCompile(`(?m)^\+?\s*- alert: ` + regexp.QuoteMeta(name) + `$`).MatchString(shipped) {
			t.Errorf("docs/runbooks.md has a section %q, but no chart or rule file has that alert", name)
		}
	}
}

// karmadaChartPatch adds the Karmada chart's PrometheusRule template, whose
// alerts are the rule file's.
const karmadaChartPatch = "patches/karmada/1.18/0003-chart-holdfast-images-and-guard-flags.patch"

// TestWorkerAlertsHaveRunbooks: every alert of the worker chart's rule
// points its runbook_url at its own section of docs/runbooks.md, which
// exists. (The template is read as text: its values are filled in only by
// helm, which the e2e tests run.)
func TestWorkerAlertsHaveRunbooks(t *testing.T) {
	root := repoRoot(t)
	tmpl, err := os.ReadFile(filepath.Join(root, WorkerOperatorDir, "templates", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(t)
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`).FindAllStringSubmatch(string(tmpl), -1)
	if len(alerts) == 0 {
		t.Fatal("no alert in the worker chart's prometheusrule.yaml")
	}
	for _, a := range alerts {
		name := a[1]
		if want := "runbook_url: {{ .Values.metrics.prometheusRule.runbookBaseURL }}#" + strings.ToLower(name) + "\n"; !strings.Contains(string(tmpl), want) {
			t.Errorf("%s: no %q", name, strings.TrimSpace(want))
		}
		if !slices.Contains(sections, name) {
			t.Errorf("%s: docs/runbooks.md has no section %q", name, "## "+name)
		}
	}
}

// TestWorkerRunbookBaseURLDefault: the worker chart's default runbook base
// is the one the Karmada rule file uses, so both link the same document.
func TestWorkerRunbookBaseURLDefault(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), WorkerOperatorDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Metrics struct {
			PrometheusRule struct {
				RunbookBaseURL string `json:"runbookBaseURL"`
			} `json:"prometheusRule"`
		} `json:"metrics"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if got := v.Metrics.PrometheusRule.RunbookBaseURL; got != RunbookBaseURL {
		t.Errorf("metrics.prometheusRule.runbookBaseURL = %q, want %q", got, RunbookBaseURL)
	}
}

// karmadaChartPatchFile is the content of target, a file patch 0003 adds
// to the Karmada tree (the chart is upstream's: holdfast's files reach it
// only through the patch).
func karmadaChartPatchFile(t *testing.T, target string) string {
	t.Helper()
	p, err := patchset.Load(filepath.Join(repoRoot(t), karmadaChartPatch))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if patchset.Target(f) != target {
			continue
		}
		if !f.IsNew || len(f.TextFragments) != 1 {
			t.Fatalf("%s: %s is not a new file of one hunk", karmadaChartPatch, target)
		}
		var b strings.Builder
		for _, l := range f.TextFragments[0].Lines {
			b.WriteString(l.Line)
		}
		return b.String()
	}
	t.Fatalf("%s adds no %s", karmadaChartPatch, target)
	return ""
}

// TestKarmadaChartRuleTemplateFollowsFile: without helm, the chart's
// template has each alert of docs/alerts/karmada-prometheusrule.yaml, in
// the file's order, with its expression, its for: and its runbook_url on
// holdfast.prometheusRule.runbookBaseURL, and no other alert. (The e2e
// TestKarmadaChartPrometheusRule compares what helm renders in full.)
func TestKarmadaChartRuleTemplateFollowsFile(t *testing.T) {
	tmpl := karmadaChartPatchFile(t, "charts/karmada/templates/holdfast-prometheusrule.yaml")
	data, err := os.ReadFile(filepath.Join(repoRoot(t), KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, g := range parseRule(t, data).Spec.Groups {
		for _, rule := range g.Rules {
			want = append(want, rule.Alert)
			block := fmt.Sprintf("- alert: %s\n          expr: %s\n          for: %s\n", rule.Alert, rule.Expr, rule.For)
			if !strings.Contains(tmpl, block) {
				t.Errorf("%s: the chart's template has no\n%s", rule.Alert, block)
			}
			if url := "runbook_url: {{ $runbooks }}#" + strings.ToLower(rule.Alert) + "\n"; !strings.Contains(tmpl, url) {
				t.Errorf("%s: the chart's template has no %q", rule.Alert, strings.TrimSpace(url))
			}
		}
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`).FindAllStringSubmatch(tmpl, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("the chart's alerts\n  %q\nwant %s's\n  %q", got, KarmadaPrometheusRule, want)
	}
	if want := "$runbooks := required "; !strings.Contains(tmpl, want) || !strings.Contains(tmpl, "$rule.runbookBaseURL") {
		t.Errorf("the chart's template does not take $runbooks from holdfast.prometheusRule.runbookBaseURL")
	}
}
