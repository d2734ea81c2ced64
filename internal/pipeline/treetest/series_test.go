package treetest_test

import (
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// repoRoot is the holdfast checkout this package sits in.
const repoRoot = "../../.."

// TestEverySeriesClaimsItsTests loads the headers of every series of the
// repository (patches/<upstream>/<minor>/) and checks their test names
// (Holdfast-Regression-Test, Holdfast-Feature-Test) against the Test
// functions of tests/<upstream>/, as Check does: a named test that is not
// there (renamed), a test there that no patch names, a patch naming none.
// Check runs only in `make upstream-test`, on built trees; this runs in
// `make unit`, so a renamed test fails there.
func TestEverySeriesClaimsItsTests(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(repoRoot, "patches", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, dir := range dirs {
		if patches, _ := filepath.Glob(filepath.Join(dir, "*.patch")); len(patches) == 0 {
			continue
		}
		series++
		upstream := filepath.Base(filepath.Dir(dir))
		testsDir := path.Join("tests", upstream)
		t.Run(upstream+"/"+filepath.Base(dir), func(t *testing.T) {
			s, err := patchset.LoadSeries(dir)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := treetest.NewPlan(s, nil, filepath.Join(repoRoot, filepath.FromSlash(testsDir)))
			if err != nil {
				t.Fatal(err)
			}
			fixes, _, problems := treetest.Claims(s, plan.RegressionTests, testsDir)
			if len(problems) > 0 {
				t.Errorf("the series' test names do not match %s:\n%s", testsDir, strings.Join(problems, "\n"))
			}
			if len(fixes) == 0 {
				t.Errorf("no fix in the series")
			}
		})
	}
	if series == 0 {
		t.Fatalf("no series under %s/patches", repoRoot)
	}
}
