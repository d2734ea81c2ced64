package e2ereport

import (
	"fmt"
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
// (the run tables of the karmada-control-plane and
// karmada-scheduler-estimator suites, the worker suites'
// beginScenario calls) and checks that the catalogue lists exactly them, so
// the list the release requires cannot drift from what the suites run.
func TestCatalogMatchesTheSuites(t *testing.T) {
	found := map[string]bool{} // "suite\x00name\x00binary"; binary "" when the source does not say
	add := func(suite, name, binary string) { found[suite+"\x00"+name+"\x00"+binary] = true }
	// showsRed: of each pristine row found, whether the suite's code for it
	// can show the bug (record red-as-expected), which is what the
	// catalogue must then require of it; a pristine row that cannot is a
	// control, required to pass.
	showsRed := map[string]bool{}

	// e2e/karmadacp and e2e/estimator define their scenarios in a run
	// table: run(t, name, karmadacp.<Build>, f).
	for dir, suite := range map[string]string{
		"../../e2e/karmadacp": "karmada-control-plane",
		"../../e2e/estimator": "karmada-scheduler-estimator",
	} {
		files := parseDir(t, dir)
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isIdent(call.Fun, "run") || len(call.Args) != 4 {
					return true
				}
				name, ok := stringLit(call.Args[1])
				sel, isSel := call.Args[2].(*ast.SelectorExpr)
				if ok && isSel {
					binary := strings.ToLower(sel.Sel.Name)
					add(suite, name, binary)
					if binary == "pristine" {
						showsRed[suite+"\x00"+name+"\x00pristine"] = recordsRed(files, call.Args[3])
					}
				}
				return true
			})
		}
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
					if binary == "pristine" {
						// These suites' pristine rows assert the bug (their
						// helpers have no control row): red.
						showsRed[suite+"\x00"+name+"\x00pristine"] = true
					}
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
			for _, row := range p.Rows {
				key := suite + "\x00" + p.Name + "\x00" + row.Binary
				catalogued[key] = true
				if !found[key] && !found[suite+"\x00"+p.Name+"\x00"] {
					t.Errorf("the catalogue lists %s/%s (%s), which no suite defines", suite, p.Name, row.Binary)
				}
			}
		}
	}
	for key, red := range showsRed {
		parts := strings.Split(key, "\x00")
		want, listed := Expectation(parts[0], parts[1], parts[2])
		if listed && (want == RedAsExpected) != red {
			what := "can show the bug (it records red-as-expected)"
			if !red {
				what = "cannot show the bug (no red-as-expected outcome): a control"
			}
			t.Errorf("the catalogue requires %s of %s/%s (pristine), but the suite's code for it %s", want, parts[0], parts[1], what)
		}
	}
	for suite, planned := range OptIn {
		for _, p := range planned {
			for _, row := range p.Rows {
				catalogued[suite+"\x00"+p.Name+"\x00"+row.Binary] = true
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

// recordsRed reports whether fn (a function's name or a function literal)
// records e2ereport.RedAsExpected as an Outcome, in its own body or in a
// function or method of files it calls.
func recordsRed(files []*ast.File, fn ast.Expr) bool {
	decls := map[string][]*ast.FuncDecl{} // by name; methods too
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				decls[fd.Name.Name] = append(decls[fd.Name.Name], fd)
			}
		}
	}
	var bodies []ast.Node
	seen := map[string]bool{}
	follow := func(name string) {
		if !seen[name] {
			seen[name] = true
			for _, fd := range decls[name] {
				bodies = append(bodies, fd.Body)
			}
		}
	}
	switch fn := fn.(type) {
	case *ast.Ident:
		follow(fn.Name)
	case *ast.FuncLit:
		bodies = append(bodies, fn.Body)
	}
	red := false
	for len(bodies) > 0 {
		body := bodies[0]
		bodies = bodies[1:]
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch f := call.Fun.(type) {
			case *ast.Ident:
				follow(f.Name)
			case *ast.SelectorExpr:
				if f.Sel.Name == "Outcome" && len(call.Args) > 0 {
					if arg, ok := call.Args[0].(*ast.SelectorExpr); ok && arg.Sel.Name == "RedAsExpected" {
						red = true
					}
				}
				follow(f.Sel.Name)
			}
			return true
		})
	}
	return red
}

// fileSet holds the positions of every file parseDir reads.
var fileSet = token.NewFileSet()

func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var files []*ast.File
	for _, p := range paths {
		f, err := parser.ParseFile(fileSet, p, nil, parser.SkipObjectResolution)
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

// fullReport is a row of every catalogued scenario, each showing what the
// catalogue requires.
func fullReport() Report {
	var r Report
	for _, suite := range Suites() {
		s := Suite{Suite: suite}
		for _, p := range Catalog[suite] {
			for _, row := range p.Rows {
				s.Scenarios = append(s.Scenarios, Scenario{Suite: suite, Name: p.Name, Binary: row.Binary, Result: row.Expected, Expected: row.Expected})
			}
		}
		r.Suites = append(r.Suites, s)
	}
	return r
}

func TestMissing(t *testing.T) {
	r := fullReport()
	if m := r.Missing(); len(m) != 0 {
		t.Fatalf("a full report misses %q", m)
	}
	if u := r.Unmet(); len(u) != 0 {
		t.Fatalf("a full report as the catalogue requires has unmet rows %+v", u)
	}
	r.Suites[0].Scenarios = r.Suites[0].Scenarios[1:]
	if m := r.Missing(); len(m) != 1 || !strings.HasPrefix(m[0], r.Suites[0].Suite+"/") {
		t.Errorf("Missing() = %q, want the one dropped row", m)
	}
}

// TestMissingRequiresEveryRow drops each catalogued row in turn, the
// pristine ones included (the rows that prove a scenario detects the bug):
// Missing names exactly that row.
func TestMissingRequiresEveryRow(t *testing.T) {
	pristine := 0
	for i, s := range fullReport().Suites {
		for j, sc := range s.Scenarios {
			r := fullReport()
			r.Suites[i].Scenarios = append(r.Suites[i].Scenarios[:j:j], r.Suites[i].Scenarios[j+1:]...)
			want := fmt.Sprintf("%s/%s (%s)", sc.Suite, sc.Name, sc.Binary)
			if m := r.Missing(); len(m) != 1 || m[0] != want {
				t.Errorf("without the row %s, Missing() = %q", want, m)
			}
			if sc.Binary == "pristine" {
				pristine++
			}
		}
	}
	if pristine == 0 {
		t.Fatal("the catalogue has no pristine row")
	}
}

// TestMissingKeysRowsByTheirOwnSuite: a row counts for the suite it names
// (its file's when it names none), the suite Met judges it under, so a row
// cannot be required under one suite and judged under another.
func TestMissingKeysRowsByTheirOwnSuite(t *testing.T) {
	r := fullReport()
	r.Suites[0].Scenarios[0].Suite = ""
	if m := r.Missing(); len(m) != 0 {
		t.Errorf("a row without a suite of its own is its file's: Missing() = %q", m)
	}
	r.Suites[0].Scenarios[0].Suite = "a test's own"
	if m := r.Missing(); len(m) != 1 {
		t.Errorf("a row naming another suite counts for that one: Missing() = %q", m)
	}
}

// TestCatalogRowsExpectWhatTheirBuildCan: a patched row must pass, a
// pristine row is red (it shows the bug) or a control (it passes).
func TestCatalogRowsExpectWhatTheirBuildCan(t *testing.T) {
	for _, catalogue := range []map[string][]Planned{Catalog, OptIn} {
		for suite, planned := range catalogue {
			for _, p := range planned {
				if len(p.Rows) == 0 {
					t.Errorf("%s/%s has no row", suite, p.Name)
				}
				for _, row := range p.Rows {
					ok := row.Binary == "patched" && row.Expected == Pass ||
						row.Binary == "pristine" && (row.Expected == RedAsExpected || row.Expected == Pass)
					if !ok {
						t.Errorf("%s/%s (%s) expects %q", suite, p.Name, row.Binary, row.Expected)
					}
				}
			}
		}
	}
}

// TestTheCatalogueOwnsTheExpectation: a row the catalogue requires to be
// red is unmet when it passes, whatever the suite wrote as its expected
// outcome; a pristine control must pass.
func TestTheCatalogueOwnsTheExpectation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         Scenario
		met       bool
		shortfall string
	}{
		// What e2e/karmadacp wrote before the catalogue said it: a suite
		// whose pristine row expected "pass" (the line setting
		// RedAsExpected deleted) and whose scenario no longer showed the bug.
		{"pristine passing, expecting to", Scenario{Suite: "karmada-control-plane", Name: "ca-rotation-replaced", Binary: "pristine", Result: Pass, Expected: Pass},
			false, "pass, and the row expects pass where e2ereport.Catalog requires red-as-expected"},
		{"pristine red, expecting pass", Scenario{Suite: "karmada-control-plane", Name: "ca-rotation-replaced", Binary: "pristine", Result: RedAsExpected, Expected: Pass},
			false, "red-as-expected, and the row expects pass where e2ereport.Catalog requires red-as-expected"},
		{"pristine red as required", Scenario{Suite: "karmada-control-plane", Name: "ca-rotation-replaced", Binary: "pristine", Result: RedAsExpected, Expected: RedAsExpected}, true, ""},
		{"pristine passing, required red", Scenario{Suite: "karmada-control-plane", Name: "ca-rotation-replaced", Binary: "pristine", Result: Pass, Expected: RedAsExpected},
			false, "pass, expected red-as-expected"},
		{"control passing", Scenario{Suite: "karmada-control-plane", Name: "repeated-restart", Binary: "pristine", Result: Pass, Expected: Pass}, true, ""},
		{"control red, expecting it", Scenario{Suite: "karmada-control-plane", Name: "repeated-restart", Binary: "pristine", Result: RedAsExpected, Expected: RedAsExpected},
			false, "red-as-expected, and the row expects red-as-expected where e2ereport.Catalog requires pass"},
		{"opt-in row", Scenario{Suite: "karmada-control-plane", Name: "repeated-restart", Binary: "patched", Result: RedAsExpected, Expected: RedAsExpected}, false, "e2ereport.Catalog requires pass"},
		{"a test's own suite", Scenario{Suite: "karmada-rotation", Name: "ca-rotation-replaced", Binary: "pristine", Result: Pass, Expected: Pass}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Met(); got != tc.met {
				t.Errorf("Met() = %v, want %v", got, tc.met)
			}
			if got := tc.s.Shortfall(); !strings.Contains(got, tc.shortfall) || (tc.shortfall == "") != (got == "") {
				t.Errorf("Shortfall() = %q, want %q", got, tc.shortfall)
			}
			r := Report{Suites: []Suite{{Suite: tc.s.Suite, Scenarios: []Scenario{tc.s}}}}
			if unmet := r.Unmet(); (len(unmet) == 0) != tc.met {
				t.Errorf("Unmet() = %+v", unmet)
			}
			if md := string(r.Markdown()); strings.Contains(md, "**NO**") == tc.met ||
				strings.Contains(md, "(the catalogue: ") != strings.Contains(tc.shortfall, "Catalog requires") {
				t.Errorf("Markdown:\n%s", md)
			}
			// A row without a suite of its own is judged under its file's.
			r.Suites[0].Scenarios[0].Suite = ""
			if md := string(r.Markdown()); strings.Contains(md, "**NO**") == tc.met {
				t.Errorf("Markdown of a row without its suite:\n%s", md)
			}
			if unmet := r.Unmet(); (len(unmet) == 0) != tc.met {
				t.Errorf("Unmet() of a row without its suite = %+v", unmet)
			}
		})
	}
}

// TestBeginTakesTheCataloguesExpectation: a suite leaves Expected empty
// and the row gets the catalogue's; a row claiming another expectation
// fails, whatever the test showed.
func TestBeginTakesTheCataloguesExpectation(t *testing.T) {
	rec := NewRecorder(t.TempDir(), "karmada-control-plane")
	t.Run("pristine, no expectation", func(t *testing.T) {
		rec.Begin(t, Scenario{Name: "ca-rotation-replaced", Binary: "pristine"}).Outcome(RedAsExpected, "RED")
	})
	t.Run("control, no expectation", func(t *testing.T) {
		rec.Begin(t, Scenario{Name: "repeated-restart", Binary: "pristine"}).PassWithTest()
	})
	t.Run("pristine, claiming pass", func(t *testing.T) {
		rec.Begin(t, Scenario{Name: "ca-rotation-replaced", Binary: "pristine", Expected: Pass}).PassWithTest()
	})
	t.Run("pristine, claiming red", func(t *testing.T) {
		rec.Begin(t, Scenario{Name: "ca-rotation-replaced", Binary: "pristine", Expected: RedAsExpected}).PassWithTest()
	})
	got := make([]string, len(rec.scenarios))
	for i, s := range rec.scenarios {
		got[i] = fmt.Sprintf("%s/%s %s %s", s.Name, s.Binary, s.Result, s.Expected)
	}
	want := []string{
		"ca-rotation-replaced/pristine red-as-expected red-as-expected",
		"repeated-restart/pristine pass pass",
		"ca-rotation-replaced/pristine fail pass",
		"ca-rotation-replaced/pristine red-as-expected red-as-expected",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if notes := strings.Join(rec.scenarios[2].Notes, " "); !strings.Contains(notes, "expects pass; e2ereport.Catalog requires red-as-expected") {
		t.Errorf("the refused row's notes %q do not say why", notes)
	}
}

// TestBeginDefaultsOtherRowsToPass: a setup row, and a row of a suite
// outside the catalogue that says nothing, expect pass.
func TestBeginDefaultsOtherRowsToPass(t *testing.T) {
	own := NewRecorder(t.TempDir(), "a test's own")
	t.Run("own", func(t *testing.T) { own.Begin(t, Scenario{Name: "x", Binary: "pristine"}).PassWithTest() })
	t.Run("own, red", func(t *testing.T) {
		own.Begin(t, Scenario{Name: "y", Binary: "pristine", Expected: RedAsExpected}).PassWithTest()
	})
	catalogued := NewRecorder(t.TempDir(), "worker-hub-failover")
	t.Run("setup", func(t *testing.T) {
		catalogued.Begin(t, Scenario{Name: "setup: clusters", Binary: "patched"}).PassWithTest()
	})
	rows := append(own.scenarios, catalogued.scenarios...)
	if len(rows) != 3 || rows[0].Result != Pass || rows[0].Expected != Pass || rows[1].Result != RedAsExpected || rows[1].Expected != RedAsExpected ||
		rows[2].Result != Pass || rows[2].Expected != Pass {
		t.Errorf("rows %+v", rows)
	}
}

// TestSuitesLeaveTheExpectationToTheCatalogue: no suite under e2e/ sets a
// row's Expected (an e2ereport.Scenario literal's field, or an assignment
// to it): what a row must show is the catalogue's alone, so a suite's
// edit (a deleted "pristine is red" line) cannot change it.
func TestSuitesLeaveTheExpectationToTheCatalogue(t *testing.T) {
	for _, dir := range []string{"../../e2e/karmadacp", "../../e2e/estimator", "../../e2e/worker", "../../e2e/node"} {
		for _, f := range parseDir(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				var field *ast.Ident
				switch n := n.(type) {
				case *ast.KeyValueExpr:
					field, _ = n.Key.(*ast.Ident)
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Expected" {
							field = sel.Sel
						}
					}
				}
				if field != nil && field.Name == "Expected" {
					t.Errorf("%s sets a row's Expected: leave it to e2ereport.Catalog", fileSet.Position(n.Pos()))
				}
				return true
			})
		}
	}
}
