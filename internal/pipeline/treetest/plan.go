package treetest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/carry"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
)

// Plan is what to test in a pin's trees. Packages are go command patterns
// relative to the tree root ("./pkg/util").
type Plan struct {
	// Touched are the packages holding a file some patch changes.
	Touched []string
	// Carried are the carried libraries, each with its subpackages.
	Carried []string
	// RegressionPackages hold holdfast's regression tests.
	RegressionPackages []string
	// RegressionTests are the Test functions declared in the regression
	// test files, the only tests run on the pristine tree.
	RegressionTests []string
	// OverrideImporters are the packages importing a module the series'
	// dependency overrides moved (Runner.OverrideImporters): their own
	// tests run on the patched tree with the new versions, in a run of
	// their own for those the others do not cover.
	OverrideImporters []string `json:",omitempty"`
}

// NewPlan derives the plan from the series, the carried libraries and the
// regression test folder testsDir (absolute; it may be missing).
func NewPlan(series []*patchset.Patch, carried []string, testsDir string) (Plan, error) {
	var p Plan
	touched := map[string]bool{}
	for _, patch := range series {
		for _, f := range patch.Files {
			target := patchset.Target(f)
			// A deleted file leaves no package behind to test, and a
			// non-Go file (go.mod, YAML) is covered by the packages whose
			// Go files change alongside it.
			if f.IsDelete || !strings.HasSuffix(target, ".go") {
				continue
			}
			touched[pkgPattern(path.Dir(target))] = true
		}
	}
	p.Touched = sortedKeys(touched)
	for _, lib := range carried {
		p.Carried = append(p.Carried, "./"+carry.LibsDir+"/"+lib+"/...")
	}
	pkgs, tests, err := regressionTests(testsDir)
	if err != nil {
		return Plan{}, err
	}
	p.RegressionPackages, p.RegressionTests = pkgs, tests
	return p, nil
}

// Patched is every package the patched tree's run covers, each once.
func (p Plan) Patched() []string {
	seen := map[string]bool{}
	for _, list := range [][]string{p.Touched, p.Carried, p.RegressionPackages} {
		for _, pkg := range list {
			seen[pkg] = true
		}
	}
	return sortedKeys(seen)
}

// importersOnly are the override importers the main patched run does not
// already cover; they run on their own (Check).
func (p Plan) importersOnly() []string {
	covers := func(pattern, pkg string) bool {
		if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
			return pkg == tree || strings.HasPrefix(pkg, tree+"/")
		}
		return pattern == pkg
	}
	var out []string
	for _, pkg := range p.OverrideImporters {
		if !slices.ContainsFunc(p.Patched(), func(pattern string) bool { return covers(pattern, pkg) }) {
			out = append(out, pkg)
		}
	}
	return out
}

// RunPattern is the -run expression selecting exactly the regression tests.
func (p Plan) RunPattern() string {
	return "^(" + strings.Join(p.RegressionTests, "|") + ")$"
}

func pkgPattern(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir
}

// regressionTests finds the _test.go files below dir and the Test
// functions they declare. Parsing rather than a naming convention means a
// regression test cannot be skipped on pristine by being misnamed.
func regressionTests(dir string) (pkgs, tests []string, err error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil, nil, nil
	}
	pkgSet, testSet := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(dir, func(file string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(file, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("regression tests: %w", err)
		}
		found := false
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && isTest(fn) {
				testSet[fn.Name.Name], found = true, true
			}
		}
		if found {
			rel, err := filepath.Rel(dir, filepath.Dir(file))
			if err != nil {
				return err
			}
			pkgSet[pkgPattern(filepath.ToSlash(rel))] = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sortedKeys(pkgSet), sortedKeys(testSet), nil
}

// isTest reports whether fn is a top-level func TestXxx(*testing.T).
func isTest(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if fn.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := name[len("Test"):]; rest != "" && strings.ToLower(rest[:1]) == rest[:1] && strings.ToUpper(rest[:1]) != rest[:1] {
		return false // Testify is not a test; Test_x and Test1 are
	}
	params := fn.Type.Params.List
	return len(params) == 1 && len(params[0].Names) <= 1
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
