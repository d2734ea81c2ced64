package e2ereport

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogMatchesTheSuites reads the suites' own scenario definitions
// (the karmada-control-plane suite's run table, the worker suites'
// beginScenario calls) and checks that the catalogue lists exactly them, so
// the list the release requires cannot drift from what the suites run.
func TestCatalogMatchesTheSuites(t *testing.T) {
	found := map[string]bool{} // "suite\x00name\x00binary"; binary "" when the source does not say
	add := func(suite, name, binary string) { found[suite+"\x00"+name+"\x00"+binary] = true }

	for _, f := range parseDir(t, "../../e2e/karmadacp") {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isIdent(call.Fun, "run") || len(call.Args) != 4 {
				return true
			}
			name, ok := stringLit(call.Args[1])
			sel, isSel := call.Args[2].(*ast.SelectorExpr)
			if ok && isSel {
				add("karmada-control-plane", name, strings.ToLower(sel.Sel.Name))
			}
			return true
		})
	}

	// e2e/node defines its scenarios the same way (beginScenario).
	workerFiles := append(parseDir(t, "../../e2e/worker"), parseDir(t, "../../e2e/node")...)
	suites := map[string]string{}
	for _, f := range workerFiles {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := stringLit(vs.Values[i]); ok && strings.HasPrefix(id.Name, "suite") {
								suites[id.Name] = v
							}
						}
					}
				}
			}
		}
	}
	for _, f := range workerFiles {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			assigned := map[string][]string{} // string literals assigned to a local
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
					if id, ok := as.Lhs[0].(*ast.Ident); ok {
						if v, ok := stringLit(as.Rhs[0]); ok {
							assigned[id.Name] = append(assigned[id.Name], v)
						}
					}
				}
				return true
			})
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				pristineRow := isIdent(call.Fun, "beginPristineScenario")
				if !(isIdent(call.Fun, "beginScenario") || pristineRow) || len(call.Args) != 4 {
					return true
				}
				suiteID, ok := call.Args[1].(*ast.Ident)
				suite := suites[suiteID.Name]
				if !ok || suite == "" {
					return true // the setup row, recorded for any suite
				}
				binary := "patched"
				if lit, ok := call.Args[3].(*ast.CompositeLit); (ok && len(lit.Elts) > 0) || pristineRow {
					binary = "pristine"
				}
				if name, ok := stringLit(call.Args[2]); ok {
					add(suite, name, binary)
				} else if id, ok := call.Args[2].(*ast.Ident); ok {
					for _, name := range assigned[id.Name] {
						add(suite, name, "")
					}
				}
				return true
			})
		}
	}
	if len(found) == 0 {
		t.Fatal("found no scenario definitions in e2e/: has the suites' shape changed?")
	}

	catalogued := map[string]bool{}
	for suite, planned := range Catalog {
		for _, p := range planned {
			for _, b := range p.Binaries {
				key := suite + "\x00" + p.Name + "\x00" + b
				catalogued[key] = true
				if !found[key] && !found[suite+"\x00"+p.Name+"\x00"] {
					t.Errorf("the catalogue lists %s/%s (%s), which no suite defines", suite, p.Name, b)
				}
			}
		}
	}
	for suite, planned := range OptIn {
		for _, p := range planned {
			for _, b := range p.Binaries {
				catalogued[suite+"\x00"+p.Name+"\x00"+b] = true
			}
		}
	}
	var extra []string
	for key := range found {
		parts := strings.Split(key, "\x00")
		if parts[2] == "" {
			if !catalogued[parts[0]+"\x00"+parts[1]+"\x00patched"] && !catalogued[parts[0]+"\x00"+parts[1]+"\x00pristine"] {
				extra = append(extra, parts[0]+"/"+parts[1])
			}
		} else if !catalogued[key] {
			extra = append(extra, parts[0]+"/"+parts[1]+" ("+parts[2]+")")
		}
	}
	sort.Strings(extra)
	for _, e := range extra {
		t.Errorf("suite scenario %s is not in the catalogue: the release would not require it", e)
	}
}

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestBeginFailsAnUncataloguedScenario: a suite that records a scenario the
// catalogue does not list gets a failed row, so the run is not green.
func TestBeginFailsAnUncataloguedScenario(t *testing.T) {
	rec := NewRecorder(t.TempDir(), "worker-own-credential")
	t.Run("renamed", func(t *testing.T) {
		run := rec.Begin(t, Scenario{Name: "a revoked own credential, renamed", Binary: "patched", Expected: Pass})
		run.PassWithTest()
	})
	t.Run("listed", func(t *testing.T) {
		run := rec.Begin(t, Scenario{Name: "a revoked own credential: the worker exits with the guard's line", Binary: "patched", Expected: Pass})
		run.PassWithTest()
	})
	if len(rec.scenarios) != 2 || rec.scenarios[0].Result != Fail || !strings.Contains(strings.Join(rec.scenarios[0].Notes, " "), "not in e2ereport.Catalog") || rec.scenarios[1].Result != Pass {
		t.Errorf("rows %+v", rec.scenarios)
	}
}

func TestMissing(t *testing.T) {
	var r Report
	for _, suite := range Suites() {
		s := Suite{Suite: suite}
		for _, p := range Catalog[suite] {
			for _, b := range p.Binaries {
				s.Scenarios = append(s.Scenarios, Scenario{Suite: suite, Name: p.Name, Binary: b})
			}
		}
		r.Suites = append(r.Suites, s)
	}
	if m := r.Missing(); len(m) != 0 {
		t.Fatalf("a full report misses %q", m)
	}
	r.Suites[0].Scenarios = r.Suites[0].Scenarios[1:]
	if m := r.Missing(); len(m) != 1 || !strings.HasPrefix(m[0], r.Suites[0].Suite+"/") {
		t.Errorf("Missing() = %q, want the one dropped row", m)
	}
}
