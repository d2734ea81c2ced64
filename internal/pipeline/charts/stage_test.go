package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSetAnchor(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"once", "a: 1\nv: &v latest\nb: *v\n", "a: 1\nv: &v v1.2.3\nb: *v\n", ""},
		{"missing", "a: 1\n", "", `want one line "v: &v <version>", found 0`},
		{"twice", "v: &v a\nv: &v b\n", "", "found 2"},
		{"indented is not top-level", "x:\n  v: &v a\n", "", "found 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setAnchor([]byte(tc.in), "v", "v1.2.3")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

var karmadaPin = pins.Pin{Version: "v1.18.2", Revision: 2}

func TestStageKarmadaSetsAnchorsAndLaysCommon(t *testing.T) {
	tree, root, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, tree, map[string]string{
		"charts/karmada/Chart.yaml":  "name: karmada\n",
		"charts/karmada/values.yaml": "karmadaImageVersion: &karmadaImageVersion latest\nholdfastImageVersion: &holdfastImageVersion latest\n",
	})
	writeFiles(t, root, map[string]string{
		KarmadaCommonDir + "/Chart.yaml":            "name: common\n",
		KarmadaCommonDir + "/templates/_images.tpl": "{{/* */}}\n",
	})
	got, err := Charts[0].Stage(dir, root, tree, karmadaPin)
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join(dir, "karmada") {
		t.Errorf("Stage returned %s", got)
	}
	values, err := os.ReadFile(filepath.Join(got, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "karmadaImageVersion: &karmadaImageVersion v1.18.2\nholdfastImageVersion: &holdfastImageVersion v1.18.2-holdfast.2\n"
	if string(values) != want {
		t.Errorf("values.yaml:\n%s\nwant\n%s", values, want)
	}
	for _, f := range []string{"Chart.yaml", "charts/common/Chart.yaml", "charts/common/templates/_images.tpl"} {
		if _, err := os.Stat(filepath.Join(got, f)); err != nil {
			t.Errorf("staged chart lacks %s: %v", f, err)
		}
	}
}

func TestStageKarmadaFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tree   map[string]string
		common bool
		want   string
	}{
		{
			name:   "tree without the chart patch",
			tree:   map[string]string{"charts/karmada/values.yaml": "karmadaImageVersion: &karmadaImageVersion latest\n"},
			common: true,
			want:   "0003-chart-holdfast-images-and-guard-flags",
		},
		{
			name: "upstream vendors common itself",
			tree: map[string]string{
				"charts/karmada/values.yaml":              "karmadaImageVersion: &karmadaImageVersion latest\nholdfastImageVersion: &holdfastImageVersion latest\n",
				"charts/karmada/charts/common/Chart.yaml": "name: common\n",
			},
			common: true,
			want:   "destination exists",
		},
		{
			name: "no chart in the tree",
			tree: map[string]string{"go.mod": "module x\n"},
			want: "charts/karmada",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, root := t.TempDir(), t.TempDir()
			writeFiles(t, tree, tc.tree)
			if tc.common {
				writeFiles(t, root, map[string]string{KarmadaCommonDir + "/Chart.yaml": "name: common\n"})
			}
			_, err := Charts[0].Stage(t.TempDir(), root, tree, karmadaPin)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "chart karmada for karmada v1.18.2") {
				t.Errorf("err = %v, want it to name the chart and pin", err)
			}
		})
	}
}

func TestStageWorkerOperatorAddsUpstreamCRDsAndRBAC(t *testing.T) {
	tree, root := t.TempDir(), t.TempDir()
	writeFiles(t, tree, map[string]string{
		"config/crd/bases/a.kubeslice.io_as.yaml": "kind: CustomResourceDefinition\n",
		"config/crd/bases/b.kubeslice.io_bs.yaml": "kind: CustomResourceDefinition\n",
		"config/crd/kustomization.yaml":           "resources: []\n",
		"config/rbac/role.yaml":                   "rules: []\n",
		"config/rbac/leader_election_role.yaml":   "rules: []\n",
		"config/rbac/auth_proxy_role.yaml":        "rules: []\n",
	})
	writeFiles(t, root, map[string]string{
		WorkerOperatorDir + "/Chart.yaml":          "name: worker-operator\n",
		WorkerOperatorDir + "/templates/rbac.yaml": "x\n",
	})
	dir, err := Charts[1].Stage(t.TempDir(), root, tree, pins.Pin{Version: "v1.6.4", Revision: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Chart.yaml",
		"config/rbac/leader_election_role.yaml",
		"config/rbac/role.yaml",
		"crds/a.kubeslice.io_as.yaml",
		"crds/b.kubeslice.io_bs.yaml",
		"templates/rbac.yaml",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("staged files:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStageWorkerOperatorWithoutCRDs(t *testing.T) {
	tree, root := t.TempDir(), t.TempDir()
	writeFiles(t, tree, map[string]string{"config/rbac/role.yaml": "rules: []\n"})
	writeFiles(t, root, map[string]string{WorkerOperatorDir + "/Chart.yaml": "name: worker-operator\n"})
	_, err := Charts[1].Stage(t.TempDir(), root, tree, pins.Pin{Version: "v1.6.4", Revision: 1})
	if err == nil || !strings.Contains(err.Error(), "no CRDs in") {
		t.Fatalf("err = %v, want no CRDs", err)
	}
}
