package treetest_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// fixPatch is a patch of the synthetic upstream for fix id that adds
// pkg/util/<file>.go (a file of its own, so that patches apply in any
// number) and names test as its regression test.
func fixPatch(id, file, test string) string {
	return fmt.Sprintf(`Subject: Fix %[1]s
Why: A fixture of internal/pipeline/treetest: one more carried fix.
Upstream-Issue: none
Upstream-PR: none
Applied-Upstream: no
Drop-When: never; it is a fixture
Holdfast-Fix: %[1]s
Holdfast-Regression-Test: %[3]s
---
diff --git a/pkg/util/%[2]s.go b/pkg/util/%[2]s.go
new file mode 100644
--- /dev/null
+++ b/pkg/util/%[2]s.go
@@ -0,0 +1 @@
+package util
`, id, file, test)
}

// regressionTest is a Test function of the synthetic upstream's pkg/util.
func regressionTest(name, body string) string {
	return "package util\n\nimport \"testing\"\n\nfunc " + name + "(t *testing.T) {\n" + body + "}\n"
}

// TestCheckJudgesEachTestOnItsOwnState: Check gives each regression test
// the state it had on each tree, not the set's. With one fix's test
// failing on pristine, the set is RED there; a second fix whose test
// passes on pristine (it shows no bug) must still be refused, and a test
// skipped on one tree, or failing on both, keeps its own state beside
// tests that did not.
func TestCheckJudgesEachTestOnItsOwnState(t *testing.T) {
	needGo(t)
	for _, tc := range []struct {
		name  string
		files map[string]string
		// want is "test pristine patched" for each fix's tests, in series order.
		want    []string
		verdict string
	}{
		{"two fixes, one passing on pristine", map[string]string{
			"patches/up/1.2/0002-not-empty.patch": fixPatch("not-empty", "notempty", "TestTokenIsNotEmpty"),
			"tests/up/pkg/util/notempty_test.go":  regressionTest("TestTokenIsNotEmpty", "\tif Token() == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n"),
		}, []string{"TestTokenIsFresh RED GREEN", "TestTokenIsNotEmpty GREEN GREEN"}, "upstream fixed not-empty"},
		{"a test skipped on pristine, one failing on both", map[string]string{
			"patches/up/1.2/0002-skips.patch": fixPatch("skips", "skips", "TestTokenSkipsOnPristine"),
			"patches/up/1.2/0003-fails.patch": fixPatch("fails", "fails", "TestTokenAlwaysFails"),
			"tests/up/pkg/util/skips_test.go": regressionTest("TestTokenSkipsOnPristine", "\tif Token() == \"frozen\" {\n\t\tt.Skip(\"frozen\")\n\t}\n"),
			"tests/up/pkg/util/fails_test.go": regressionTest("TestTokenAlwaysFails", "\tt.Fatal(\"always\")\n"),
		}, []string{"TestTokenIsFresh RED GREEN", "TestTokenSkipsOnPristine SKIPPED GREEN", "TestTokenAlwaysFails RED RED"}, "FAIL: fix skips: TestTokenSkipsOnPristine is SKIPPED on the pristine tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := pipelinetest.New(t)
			pipelinetest.Write(t, fx.Config.Root, tc.files)
			r, err := treetest.Check(context.Background(), fx.Config, treetest.Runner{Env: append(os.Environ(), fx.Env()...)}, fx.Upstream, fx.Pin)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Fixes {
				for _, test := range f.Tests {
					got = append(got, fmt.Sprintf("%s %s %s", test.Name, test.Pristine, test.Patched))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("per-test states:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if r.OK() || !strings.Contains(r.Verdict(), tc.verdict) {
				t.Errorf("OK() = %v, verdict %q: want refused, with %q", r.OK(), r.Verdict(), tc.verdict)
			}
		})
	}
}
