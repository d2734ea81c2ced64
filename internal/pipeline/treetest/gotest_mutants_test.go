package treetest_test

// Tests written from the mutants `make mutate` found living in this
// package (docs/testing.md).

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// TestGoTestRunsInTheRunnersEnvironment runs go test in a small module of
// its own: the Runner's Env reaches the tests, a failing test is a result
// and not an error, a passing run keeps no output, and a go command that
// tested nothing is an error.
func TestGoTestRunsInTheRunnersEnvironment(t *testing.T) {
	needGo(t)
	dir := t.TempDir()
	pipelinetest.Write(t, dir, map[string]string{
		"go.mod": "module example.com/probe\n\ngo 1.22\n",
		"probe_test.go": "package probe\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestEnv(t *testing.T) {\n\tif os.Getenv(\"HOLDFAST_TREETEST_PROBE\") != \"set\" {\n\t\tt.Fatal(\"the runner's environment did not reach the test\")\n\t}\n}\n\n" +
			"func TestFails(t *testing.T) {\n\tif os.Getenv(\"HOLDFAST_TREETEST_FAIL\") != \"\" {\n\t\tt.Fatal(\"asked to fail\")\n\t}\n}\n",
	})
	env := append(os.Environ(), "GOFLAGS=-count=1", "GOWORK=off", "HOLDFAST_TREETEST_PROBE=set")
	r := treetest.Runner{Env: env}
	ctx := context.Background()

	run, err := r.GoTest(ctx, dir, nil, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if run.State("TestEnv") != treetest.Green || run.State("TestFails") != treetest.Green || len(run.Output) != 0 {
		t.Errorf("TestEnv %s, TestFails %s, output %q: want both GREEN and no output", run.State("TestEnv"), run.State("TestFails"), run.Output)
	}

	r.Env = append(env, "HOLDFAST_TREETEST_FAIL=1")
	run, err = r.GoTest(ctx, dir, nil, []string{"."})
	if err != nil {
		t.Fatalf("a failing test is a result, not an error: %v", err)
	}
	if run.State("TestFails") != treetest.Red || !strings.Contains(strings.Join(run.Output, "\n"), "asked to fail") {
		t.Errorf("TestFails %s, output %q: want RED with its message", run.State("TestFails"), run.Output)
	}

	if _, err := r.GoTest(ctx, dir, []string{"-mod=bogus"}, []string{"."}); err == nil {
		t.Error("a go command that refused its flags and tested nothing: no error")
	}
}

// TestCheckUpstreamTestFails: a failing test of a carried library on the
// patched tree is not ok, whatever the regression tests say.
func TestCheckUpstreamTestFails(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"pkg/lib/lib_test.go": "package lib_test\n\nimport \"testing\"\n\nfunc TestFresh(t *testing.T) {\n\tt.Fatal(\"carried library broken\")\n}\n",
	})
	r, err := treetest.Check(context.Background(), fx.Config, treetest.Runner{Env: append(os.Environ(), fx.Env()...)}, fx.Upstream, fx.Pin)
	if err != nil {
		t.Fatal(err)
	}
	if r.UpstreamPass || r.OK() || !strings.Contains(strings.Join(r.Failures, "\n"), "TestFresh") {
		t.Errorf("upstream pass %v, OK %v, failures %q: want the failing TestFresh to fail the check", r.UpstreamPass, r.OK(), r.Failures)
	}
}

// TestCheckPackageFailingWithoutAFailedTest: a carried library whose test
// binary fails after its tests passed (a timeout's panic, a TestMain that
// exits 1) reports no failed test, only a failed package; the check must
// not read that as a pass.
func TestCheckPackageFailingWithoutAFailedTest(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"pkg/lib/main_test.go": "package lib_test\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestPasses(t *testing.T) {}\n\nfunc TestMain(m *testing.M) {\n\tm.Run()\n\tos.Exit(1)\n}\n",
	})
	r, err := treetest.Check(context.Background(), fx.Config, treetest.Runner{Env: append(os.Environ(), fx.Env()...)}, fx.Upstream, fx.Pin)
	if err != nil {
		t.Fatal(err)
	}
	if r.UpstreamPass || r.OK() || !strings.Contains(strings.Join(r.Failures, "\n"), "failed with no failing test (timed out, or TestMain exited): example.com/up/third_party/holdfast/lib") {
		t.Errorf("upstream pass %v, OK %v, failures %q: want the carried library's failed package to fail the check", r.UpstreamPass, r.OK(), r.Failures)
	}
}

// TestCheckWithoutRegressionTestsRunsPatchedOnly: when no patch names a
// regression test there is nothing to run on pristine, and the report says
// none ran.
func TestCheckWithoutRegressionTestsRunsPatchedOnly(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	if err := os.RemoveAll(filepath.Join(fx.Config.Root, "tests", "up")); err != nil {
		t.Fatal(err)
	}
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"patches/up/1.2/0001-fresh-token.patch": strings.Replace(pipelinetest.Patch, "Holdfast-Regression-Test: TestTokenIsFresh\n", "", 1),
	})
	var log bytes.Buffer
	r, err := treetest.Check(context.Background(), fx.Config, treetest.Runner{Env: append(os.Environ(), fx.Env()...), Log: &log}, fx.Upstream, fx.Pin)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), " go test -json "); n != 1 || r.PristineTime != 0 {
		t.Errorf("%d go test runs (pristine run %s), want the patched one only:\n%s", n, r.PristineTime, log.String())
	}
}

// TestGoTestPassesThePinsTags: upstream's tests run with the build tags its
// Makefile passes (Karmada 1.17/1.18: kubernetes_protomessage_one_more_release,
// without which pkg/estimator/server's tests fail on every tree).
func TestGoTestPassesThePinsTags(t *testing.T) {
	needGo(t)
	dir := t.TempDir()
	pipelinetest.Write(t, dir, map[string]string{
		"go.mod":        "module example.com/probe\n\ngo 1.22\n",
		"tagged.go":     "//go:build holdfast_test_tag\n\npackage probe\n\nconst tagged = true\n",
		"untagged.go":   "//go:build !holdfast_test_tag\n\npackage probe\n\nconst tagged = false\n",
		"probe_test.go": "package probe\n\nimport \"testing\"\n\nfunc TestTagged(t *testing.T) {\n\tif !tagged {\n\t\tt.Fatal(\"built without the tag\")\n\t}\n}\n",
	})
	r := treetest.Runner{Env: append(os.Environ(), "GOFLAGS=-count=1", "GOWORK=off"), Tags: "holdfast_test_tag"}
	run, err := r.GoTest(context.Background(), dir, nil, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if run.State("TestTagged") != treetest.Green {
		t.Errorf("TestTagged %s, output %q: want GREEN with the runner's tags", run.State("TestTagged"), run.Output)
	}
}
