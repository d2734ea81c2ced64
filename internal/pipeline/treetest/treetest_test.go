package treetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
}

func TestNewPlan(t *testing.T) {
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		// Helpers without tests do not make a package a test package,
		// and methods, TestMain and Testify are not tests.
		"tests/up/pkg/helper/helper_test.go": "package helper\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {}\n\nfunc Testify(t *testing.T) {}\n",
		"tests/up/more_test.go":              "package up\n\nimport \"testing\"\n\ntype s struct{}\n\nfunc (s) TestMethod(t *testing.T) {}\n\nfunc TestRoot(t *testing.T) {}\n",
	})
	in, err := fx.Config.LoadInputs(fx.Upstream, fx.Pin.Series)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := treetest.NewPlan(in.Series, fx.Upstream.Carry, filepath.Join(fx.Config.Root, pipeline.TestsDir(fx.Upstream)))
	if err != nil {
		t.Fatal(err)
	}
	want := treetest.Plan{
		Touched:            []string{"./pkg/util"},
		Carried:            []string{"./third_party/holdfast/lib/..."},
		RegressionPackages: []string{".", "./pkg/util"},
		RegressionTests:    []string{"TestRoot", "TestTokenIsFresh"},
	}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan:\n got %+v\nwant %+v", plan, want)
	}
	if got, want := plan.Patched(), []string{".", "./pkg/util", "./third_party/holdfast/lib/..."}; !reflect.DeepEqual(got, want) {
		t.Errorf("Patched() = %q, want %q", got, want)
	}
	if got, want := plan.RunPattern(), "^(TestRoot|TestTokenIsFresh)$"; got != want {
		t.Errorf("RunPattern() = %q, want %q", got, want)
	}
}

func TestNewPlanWithoutTests(t *testing.T) {
	plan, err := treetest.NewPlan(nil, nil, filepath.Join(t.TempDir(), "missing"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.RegressionTests) != 0 || len(plan.Patched()) != 0 {
		t.Errorf("plan for nothing = %+v", plan)
	}
}

// TestCheck runs the synthetic upstream end to end: the regression test is
// RED on pristine and GREEN on patched.
func TestCheck(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	runner := treetest.Runner{Env: append(os.Environ(), fx.Env()...)}
	r, err := treetest.Check(context.Background(), fx.Config, runner, fx.Upstream, fx.Pin)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pristine != treetest.Red || r.Patched != treetest.Green || !r.UpstreamPass || !r.OK() {
		t.Fatalf("result pristine %s patched %s upstream pass %v OK %v, failures %q", r.Pristine, r.Patched, r.UpstreamPass, r.OK(), r.Failures)
	}
	// A proven fix leaves nothing to report as a failure.
	if len(r.Failures) != 0 {
		t.Errorf("failures %q, want none", r.Failures)
	}
	if len(r.Fixes) != 1 || r.Fixes[0].Fix != "fresh-token" || len(r.Fixes[0].Tests) != 1 ||
		r.Fixes[0].Tests[0] != (treetest.TestResult{Name: "TestTokenIsFresh", Pristine: treetest.Red, Patched: treetest.Green}) {
		t.Errorf("per-fix result %+v", r.Fixes)
	}
	if r.HoldfastVersion != "v1.2.0-holdfast.3" || !strings.HasPrefix(r.SeriesHash, "h1:") {
		t.Errorf("provenance %q %q", r.HoldfastVersion, r.SeriesHash)
	}
	var text bytes.Buffer
	if err := treetest.WriteText(&text, []*treetest.Result{r}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"up v1.2.0  regression  pristine RED (expected)  patched GREEN (expected)  upstream tests of touched pkgs: PASS",
		"result: ok",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}

	dir := t.TempDir()
	written, err := treetest.SaveReports(dir, "test-up", []*treetest.Result{r})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 2 {
		t.Fatalf("wrote %q", written)
	}
	data, err := os.ReadFile(filepath.Join(dir, "test-up.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decoded []map[string]any
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if decoded[0]["pristine"] != "RED" || decoded[0]["patched"] != "GREEN" {
		t.Errorf("JSON report %s", data)
	}
	md, err := os.ReadFile(filepath.Join(dir, "test-up.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| up | v1.2.0 | v1.2.0-holdfast.3 | RED (expected) | GREEN (expected) | PASS | ok |") {
		t.Errorf("Markdown report:\n%s", md)
	}
}

// TestPristineCheck is the rebase hook: RED on the pinned release, GREEN on
// the release where upstream fixed the bug.
func TestPristineCheck(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	check := treetest.PristineCheck(treetest.Runner{Env: append(os.Environ(), fx.Env()...)}, filepath.Join(fx.Config.Root, pipeline.TestsDir(fx.Upstream)), nil)
	for _, tc := range []struct {
		version string
		fixed   bool
	}{
		{"v1.2.0", false},
		{"v1.4.0", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			pin := pins.Pin{Version: tc.version, Sum: fx.Sums[tc.version], Series: fx.Pin.Series, Revision: 1}
			tree, err := fx.Config.Build(context.Background(), fx.Upstream, pin, provenance.Pristine)
			if err != nil {
				t.Fatal(err)
			}
			fixed, detail, err := check(context.Background(), tree.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if fixed != tc.fixed || !strings.Contains(detail, "TestTokenIsFresh") {
				t.Errorf("fixed %v (%s), want %v", fixed, detail, tc.fixed)
			}
		})
	}
}

// TestCheckRefusesWhatShowsNothing: a missing tests/<upstream>/ (renamed,
// say) and a regression test that skips on the patched tree show nothing
// about the fix, so neither may read ok.
func TestCheckRefusesWhatShowsNothing(t *testing.T) {
	needGo(t)
	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, root string)
		wantV string
	}{
		{"no tests folder", func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, "tests", "up")); err != nil {
				t.Fatal(err)
			}
		}, "FAIL"},
		{"skipped on patched", func(t *testing.T, root string) {
			pipelinetest.Write(t, root, map[string]string{
				"tests/up/pkg/util/regression_test.go": "package util\n\nimport \"testing\"\n\nfunc TestTokenIsFresh(t *testing.T) {\n\tif Token() == \"fresh\" {\n\t\tt.Skip(\"nothing to check\")\n\t}\n\tt.Fatal(\"frozen\")\n}\n",
			})
		}, "TestTokenIsFresh is SKIPPED on the patched tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := pipelinetest.New(t)
			tc.edit(t, fx.Config.Root)
			r, err := treetest.Check(context.Background(), fx.Config, treetest.Runner{Env: append(os.Environ(), fx.Env()...)}, fx.Upstream, fx.Pin)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || !strings.Contains(r.Verdict(), tc.wantV) {
				t.Errorf("OK() = %v, verdict %q (want it to contain %q); pristine %s patched %s, problems %q", r.OK(), r.Verdict(), tc.wantV, r.Pristine, r.Patched, r.Problems)
			}
		})
	}
}
