//go:build e2e

package charts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// workerRBACAdditions are the permissions worker-operator patch
// 0006-rbac-markers-statefulsets-pdb-events adds to config/rbac/role.yaml,
// as "group resource verb" ("" is the core group). docs/adopting.md says
// why each is there.
var workerRBACAdditions = []string{
	`"" events create`,
	`"" events update`,
	`"" pods delete`,
	`apps statefulsets list`,
	`apps statefulsets update`,
	`apps statefulsets watch`,
	`policy poddisruptionbudgets watch`,
}

// managerClusterRole is the ClusterRole the chart fills from role.yaml.
const managerClusterRole = "ClusterRole/kubeslice-manager-role"

// TestWorkerOperatorChartDiffIsTheRBACAdditions is the drop-in rule for the
// worker chart: against the chart built the same way from the pristine tree
// (upstream's config/ as released, which is what the chart rendered before
// the series carried RBAC), the shipped chart renders the same objects,
// byte for byte, except the manager ClusterRole, whose rules only gain
// workerRBACAdditions. A patch that changes a CRD, drops a permission or
// adds one not listed here fails it.
func TestWorkerOperatorChartDiffIsTheRBACAdditions(t *testing.T) {
	f := setup(t)
	before := f.pristineWorkerOperator(t)
	for _, values := range []string{workerPrimary, workerHA} {
		t.Run(filepath.Base(values), func(t *testing.T) {
			args := []string{"--include-crds", "--values", f.path(values)}
			got := f.render(t, f.operator, workerNamespace, args...)
			want := f.render(t, before, workerNamespace, args...)
			if !slices.Equal(sortedNames(got), sortedNames(want)) {
				t.Fatalf("rendered objects differ:\n patched  %s\n pristine %s", sortedNames(got), sortedNames(want))
			}
			for name, doc := range want {
				if name == managerClusterRole {
					continue
				}
				if !bytes.Equal(got[name], doc) {
					t.Errorf("%s differs from the chart rendered from the pristine tree:\n--- patched\n%s\n--- pristine\n%s", name, got[name], doc)
				}
			}
			added, removed, metaDiff := ruleDiff(t, got[managerClusterRole], want[managerClusterRole])
			if metaDiff != "" {
				t.Errorf("%s: %s", managerClusterRole, metaDiff)
			}
			if len(removed) > 0 {
				t.Errorf("%s lost permissions: %s", managerClusterRole, strings.Join(removed, ", "))
			}
			if !slices.Equal(added, workerRBACAdditions) {
				t.Errorf("%s gained\n  %s\nwant exactly\n  %s", managerClusterRole, strings.Join(added, "\n  "), strings.Join(workerRBACAdditions, "\n  "))
			}
		})
	}
}

// pristineWorkerOperator packages the worker chart from the default pin's
// pristine tree with the shipped package's version and appVersion, so that
// the labels helm renders from them are the same.
func (f *fixture) pristineWorkerOperator(t *testing.T) Package {
	t.Helper()
	ctx := t.Context()
	pinFile, err := pins.Load(filepath.Join(f.root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	up, err := pinFile.Upstream(f.operator.Chart.Upstream)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := pipeline.Config{Root: f.root, Out: filepath.Join(f.workDir, "trees")}.Build(ctx, up, f.operator.Pin, provenance.Pristine)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(f.workDir, "pristine-chart")
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	dir, err := f.operator.Chart.Stage(filepath.Join(work, "stage"), f.root, tree.Dir, f.operator.Pin)
	if err != nil {
		t.Fatal(err)
	}
	path, err := f.helm.Package(ctx, dir, f.operator.Version, f.operator.AppVersion, filepath.Join(work, "archives"))
	if err != nil {
		t.Fatal(err)
	}
	p := f.operator
	p.Path = path
	return p
}

func sortedNames(o objects) []string {
	names := make([]string, 0, len(o))
	for k := range o {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ruleDiff compares two rendered ClusterRoles: the permissions (one per
// group, resource and verb) only got has, those only want has, and how
// anything but the rules differs.
func ruleDiff(t *testing.T, got, want []byte) (added, removed []string, metaDiff string) {
	t.Helper()
	var g, w rbacv1.ClusterRole
	for _, d := range []struct {
		doc []byte
		cr  *rbacv1.ClusterRole
	}{{got, &g}, {want, &w}} {
		if err := yaml.UnmarshalStrict(d.doc, d.cr); err != nil {
			t.Fatalf("%s: %v", managerClusterRole, err)
		}
	}
	gp, wp := permissions(t, g.Rules), permissions(t, w.Rules)
	for p := range gp {
		if !wp[p] {
			added = append(added, p)
		}
	}
	for p := range wp {
		if !gp[p] {
			removed = append(removed, p)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	g.Rules, w.Rules = nil, nil
	if !reflect.DeepEqual(g, w) {
		metaDiff = fmt.Sprintf("differs besides its rules: %+v, pristine %+v", g, w)
	}
	return added, removed, metaDiff
}

// permissions expands rules into "group resource verb" strings. A rule with
// resourceNames or nonResourceURLs is not something role.yaml holds today;
// it fails the test rather than be compared loosely.
func permissions(t *testing.T, rules []rbacv1.PolicyRule) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Fatalf("rule %+v: resourceNames and nonResourceURLs are not compared here; extend permissions()", r)
		}
		for _, g := range r.APIGroups {
			if g == "" {
				g = `""`
			}
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[g+" "+res+" "+v] = true
				}
			}
		}
	}
	return out
}
