package treetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/provenance"
)

// maxOutputLines bounds the go test output kept per failure: enough for a
// panic's first frames or a compile error list, not a whole test log.
const maxOutputLines = 40

// Check builds (or reuses) the pin's patched and pristine trees and runs
// the plan on both.
func Check(ctx context.Context, c pipeline.Config, r Runner, up *pins.Upstream, pin pins.Pin) (*Result, error) {
	patched, err := c.Build(ctx, up, pin, provenance.Patched)
	if err != nil {
		return nil, err
	}
	pristineTree, err := c.Build(ctx, up, pin, provenance.Pristine)
	if err != nil {
		return nil, err
	}
	in, err := c.LoadInputs(up, pin.Series)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(in.Series, up.Carry, filepath.Join(c.Root, pipeline.TestsDir(up)))
	if err != nil {
		return nil, err
	}
	res := &Result{
		Upstream: up.Name, Version: pin.Version, HoldfastVersion: patched.Record.HoldfastVersion,
		SeriesHash: patched.Record.SeriesHash, Plan: plan, Pristine: NoTests, Patched: NoTests,
	}

	run, err := r.GoTest(ctx, patched.Dir, nil, plan.Patched())
	if err != nil {
		return nil, err
	}
	res.PatchedTime = Duration(run.Duration)
	var why []string
	res.Patched, why = regressionState(run, plan.RegressionTests)
	res.fail("patched", why, nil)
	if res.Patched == Red {
		res.fail("patched", []string{"regression tests fail"}, run.Output)
	}
	others := run.FailedTests(plan.RegressionTests)
	res.UpstreamPass = len(others) == 0 && len(run.BuildFailed) == 0
	if !res.UpstreamPass {
		res.fail("patched", append(prefix("failed: ", others), prefix("did not build: ", run.BuildFailed)...), run.Output)
	}

	if len(plan.RegressionTests) > 0 {
		run, err := r.GoTest(ctx, pristineTree.Dir, []string{"-run", plan.RunPattern()}, plan.RegressionPackages)
		if err != nil {
			return nil, err
		}
		res.PristineTime = Duration(run.Duration)
		res.Pristine, why = regressionState(run, plan.RegressionTests)
		res.fail("pristine", why, run.Output)
	}
	return res, nil
}

func (r *Result) fail(tree string, why, output []string) {
	if len(why) == 0 {
		return
	}
	msg := tree + ": " + strings.Join(why, "; ")
	if len(output) > maxOutputLines {
		output = append([]string{fmt.Sprintf("... (%d earlier lines)", len(output)-maxOutputLines)}, output[len(output)-maxOutputLines:]...)
	}
	if len(output) > 0 {
		msg += "\n" + strings.Join(output, "\n")
	}
	r.Failures = append(r.Failures, msg)
}

func prefix(p string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = p + s
	}
	return out
}

// PristineCheck returns the check rebase.Options.PristineCheck wants: it
// runs the regression tests found in testsDir on a pristine tree and says
// whether they pass there (upstream fixed the bug). A test that does not
// build or run is an error, not a verdict.
func PristineCheck(r Runner, testsDir string) func(ctx context.Context, tree string) (bool, string, error) {
	return func(ctx context.Context, tree string) (bool, string, error) {
		plan, err := NewPlan(nil, nil, testsDir)
		if err != nil {
			return false, "", err
		}
		if len(plan.RegressionTests) == 0 {
			return false, "", fmt.Errorf("no regression tests in %s", testsDir)
		}
		run, err := r.GoTest(ctx, tree, []string{"-run", plan.RunPattern()}, plan.RegressionPackages)
		if err != nil {
			return false, "", err
		}
		state, why := regressionState(run, plan.RegressionTests)
		detail := fmt.Sprintf("%s: %s", strings.Join(plan.RegressionTests, ", "), state)
		switch state {
		case Green:
			return true, detail, nil
		case Red:
			return false, detail, nil
		default:
			return false, "", fmt.Errorf("%s", strings.Join(why, "; "))
		}
	}
}

// SaveReports writes results as dir/name.md and dir/name.json, each
// through a temporary file and a rename so a reader never sees half a
// report.
func SaveReports(dir, name string, results []*Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, out := range []struct {
		ext   string
		write func(*os.File) error
	}{
		{".md", func(f *os.File) error { return WriteMarkdown(f, results) }},
		{".json", func(f *os.File) error { return WriteJSON(f, results) }},
	} {
		ext, write := out.ext, out.write
		dest := filepath.Join(dir, name+ext)
		tmp, err := os.CreateTemp(dir, "."+name+ext+".*")
		if err != nil {
			return nil, err
		}
		err = write(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dest)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, fmt.Errorf("writing %s: %w", dest, err)
		}
		written = append(written, dest)
	}
	return written, nil
}
