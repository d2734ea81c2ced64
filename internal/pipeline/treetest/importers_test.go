package treetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOverrideImporters finds the packages whose code or tests import a
// package of an overridden module, and only those.
func TestOverrideImporters(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":                "module example.com/up\n\ngo 1.22\n\nrequire (\n\texample.com/dep v1.0.0\n\texample.com/other v1.0.0\n)\n",
		"main.go":               "package main\n\nimport _ \"example.com/dep\"\n\nfunc main() {}\n",
		"pkg/a/a.go":            "package a\n\nimport _ \"example.com/dep/sub\"\n",
		"pkg/b/b.go":            "package b\n",
		"pkg/b/b_test.go":       "package b_test\n\nimport _ \"example.com/dep\"\n",
		"pkg/c/c.go":            "package c\n\nimport _ \"example.com/other\"\n",
		"pkg/d/d.go":            "package d\n\nimport _ \"example.com/depot\"\n",
		"pkg/e/internal/e.go":   "package internal\n\nimport _ \"fmt\"\n",
		"third_party/x/x.go":    "package x\n",
		"pkg/b/testdata/t.go":   "package ignored\n\nimport _ \"example.com/dep\"\n",
		"pkg/a/a_internal.go":   "package a\n",
		"pkg/c/c_test.go":       "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
		"pkg/e/internal/e_x.go": "package internal\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Runner{Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	got, err := r.OverrideImporters(context.Background(), dir, []string{"example.com/dep"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "./pkg/a", "./pkg/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("importers of example.com/dep = %q, want %q", got, want)
	}
	if got, err := r.OverrideImporters(context.Background(), dir, nil); err != nil || got != nil {
		t.Errorf("no overridden modules: %q, %v", got, err)
	}
	if got := overriddenModules([]string{"golang.org/x/net v0.49.0 => v0.58.0 (fixes GO-2026-4918)", "cel.dev/expr v0.25.1 => v0.25.2 (required by the overridden versions)"}); !reflect.DeepEqual(got, []string{"golang.org/x/net", "cel.dev/expr"}) {
		t.Errorf("overriddenModules = %q", got)
	}
}

// TestDiscountPristine: an importer's test failing on pristine too is
// upstream's and set aside; one failing only on patched stays, as does a
// failure outside the importers.
func TestDiscountPristine(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	tree := func(newFails bool) string {
		dir := t.TempDir()
		fail := "\tt.Fatal(\"upstream's own failure\")\n"
		newBody := ""
		if newFails {
			newBody = "\tt.Fatal(\"broken by the new versions\")\n"
		}
		for name, content := range map[string]string{
			"go.mod":          "module example.com/up\n\ngo 1.22\n",
			"pkg/a/a.go":      "package a\n",
			"pkg/a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {\n" + fail + "}\n\nfunc TestNew(t *testing.T) {\n" + newBody + "}\n",
		} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	pristine := tree(false)
	r := Runner{Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	failed := []string{"example.com/up/pkg/a TestNew", "example.com/up/pkg/a TestOld", "example.com/up/pkg/touched TestX"}
	keep, keepBuild, pre, err := r.discountPristine(context.Background(), pristine, "example.com/up", []string{"./pkg/a", "./third_party/holdfast/lib"}, failed, []string{"example.com/up/third_party/holdfast/lib"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.com/up/pkg/a TestNew", "example.com/up/pkg/touched TestX"}; !reflect.DeepEqual(keep, want) {
		t.Errorf("kept %q, want %q", keep, want)
	}
	if want := []string{"example.com/up/third_party/holdfast/lib"}; !reflect.DeepEqual(keepBuild, want) {
		t.Errorf("kept build failures %q, want %q (no pristine package to compare with)", keepBuild, want)
	}
	if want := []string{"example.com/up/pkg/a TestOld"}; !reflect.DeepEqual(pre, want) {
		t.Errorf("preexisting %q, want %q", pre, want)
	}
}

func TestImportersOnly(t *testing.T) {
	p := Plan{
		Touched:           []string{"./pkg/util"},
		Carried:           []string{"./third_party/holdfast/membercred/..."},
		OverrideImporters: []string{".", "./pkg/util", "./pkg/util/proxy", "./third_party/holdfast/membercred", "./third_party/holdfast/membercred/sub"},
	}
	if got, want := p.importersOnly(), []string{".", "./pkg/util/proxy"}; !reflect.DeepEqual(got, want) {
		t.Errorf("importersOnly = %q, want %q", got, want)
	}
}

// TestSilentFailuresCount: a test binary that times out fails its package
// with no failed test event; such a package counts as failed, and is set
// aside only when the pristine twin's does the same.
func TestSilentFailuresCount(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	defer func(old string) { importerTimeout = old }(importerTimeout)
	importerTimeout = "2s"
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":        "module example.com/up\n\ngo 1.22\n",
		"pkg/hang/h.go": "package hang\n",
		// A test that passes first: the package then has test events, and
		// only the timeout's panic says it failed.
		"pkg/hang/h_test.go": "package hang\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestAFine(t *testing.T) {}\n\nfunc TestHang(t *testing.T) { time.Sleep(time.Minute) }\n",
		"pkg/fine/f.go":      "package fine\n",
		"pkg/fine/f_test.go": "package fine\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) {}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Runner{Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	run, err := r.GoTest(context.Background(), dir, []string{"-timeout", importerTimeout}, []string{"./pkg/hang", "./pkg/fine"})
	if err != nil {
		t.Fatal(err)
	}
	if got := silentFailures(run); !reflect.DeepEqual(got, []string{"example.com/up/pkg/hang"}) {
		t.Errorf("silentFailures = %q (failed tests %q, packages %v)", got, run.FailedTests(nil), run.Packages)
	}
	_, keepBuild, pre, err := r.discountPristine(context.Background(), dir, "example.com/up", []string{"./pkg/hang"}, nil, silentFailures(run))
	if err != nil {
		t.Fatal(err)
	}
	if len(keepBuild) != 0 || !reflect.DeepEqual(pre, []string{"example.com/up/pkg/hang (package failed: does not build, or timed out)"}) {
		t.Errorf("a hang the pristine twin shares: kept %q, preexisting %q", keepBuild, pre)
	}
}
