package charts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// KarmadaPrometheusRule is the standalone rule for the Karmada binaries,
// relative to the repository root (the Karmada chart is upstream's and
// carries no template for it).
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
type recorder struct{ names []string }

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil {
			r.names = append(r.names, m[1])
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

// TestKarmadaPrometheusRule: the standalone rule holds the two alerts of
// docs/membercred.md, on metric names pkg/membercred registers.
func TestKarmadaPrometheusRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), KarmadaPrometheusRule))
	if err != nil {
		t.Fatal(err)
	}
	r := parseRule(t, data)
	want := map[string]string{
		"KarmadaMemberCredentialRejected":   "increase(holdfast_member_credential_unauthorized_persisted_total[10m]) > 0",
		"KarmadaMemberCredentialUnreadable": "increase(holdfast_member_credential_refresh_failures_total[15m]) > 0",
	}
	if got := r.alerts(); !maps.Equal(got, want) {
		t.Errorf("alerts %q, want docs/membercred.md's %q", got, want)
	}
	checkExported(t, r, membercredMetrics(t))
}
