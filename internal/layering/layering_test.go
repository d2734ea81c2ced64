package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/holdfast-dist/holdfast"

// The three kinds of internal/ (docs/layout.md).
const (
	pipeline    = "internal/pipeline"
	harness     = "internal/harness"
	supplychain = "internal/supplychain"
)

// sharedLeaves are the packages directly under internal/ that more than one
// kind imports (docs/layout.md says which). A new package goes under the one
// kind that uses it; it joins this list only when the import graph puts it
// under two.
var sharedLeaves = []string{"e2ereport", "logtail", "modproxytest", "svgchart", "toolcache"}

// repoRoot is the holdfast checkout, two levels up from internal/layering.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "e2e")); err != nil {
		t.Fatalf("repository root %s: no e2e/ (%v); the test must run from internal/layering", root, err)
	}
	return root
}

// forEachImport calls fn with the slash-separated path (from the repository
// root) of every Go file under dirs, whatever its build tags, and each
// holdfast package it imports, relative to the module ("internal/toolcache").
// It returns how many Go files it parsed.
func forEachImport(t *testing.T, root string, dirs []string, fn func(file, imp string)) int {
	t.Helper()
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// testdata holds inputs, not holdfast's packages.
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			files++
			rel, _ := filepath.Rel(root, path)
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					return err
				}
				if sub, ok := strings.CutPrefix(p, module+"/"); ok {
					fn(filepath.ToSlash(rel), sub)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// under reports whether the slash path p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// TestNothingBelowImportsE2E fails for each Go file under cmd/, internal/ or
// pkg/ that imports a package of holdfast's e2e/ tree.
func TestNothingBelowImportsE2E(t *testing.T) {
	root := repoRoot(t)
	files := forEachImport(t, root, []string{"cmd", "internal", "pkg"}, func(file, imp string) {
		if under(imp, "e2e") {
			t.Errorf("%s imports %s: cmd/, internal/ and pkg/ must not import e2e/ (move what both need under internal/)", file, module+"/"+imp)
		}
	})
	// A walk that found nothing (a moved test, a wrong root) must not pass.
	if files < 100 {
		t.Fatalf("parsed only %d Go files under cmd/, internal/ and pkg/; wrong root %s?", files, root)
	}
}

// TestReleaseNeverImportsHarness fails for each Go file that would put the
// test harness into what a release is built from: a non-test file under
// internal/pipeline/ or internal/supplychain/, or any file under cmd/ or
// pkg/, importing a package of internal/harness/ (the shared leaves, which
// every kind imports, are TestSharedLeavesImportNoKind's). A pipeline
// package's _test.go files may import the harness (the charts' install
// tests start a real control plane): no release binary holds a test file.
func TestReleaseNeverImportsHarness(t *testing.T) {
	root := repoRoot(t)
	files := forEachImport(t, root, []string{"cmd", "internal", "pkg"}, func(file, imp string) {
		if !under(imp, harness) {
			return
		}
		switch {
		case under(file, "cmd"), under(file, "pkg"):
			t.Errorf("%s imports %s: cmd/ and pkg/ must not import %s/ (docs/layout.md)", file, module+"/"+imp, harness)
		case under(file, pipeline) || under(file, supplychain):
			if !strings.HasSuffix(file, "_test.go") {
				t.Errorf("%s imports %s: what a release is built from must not import %s/; only its _test.go files may (docs/layout.md)", file, module+"/"+imp, harness)
			}
		}
	})
	if files < 100 {
		t.Fatalf("parsed only %d Go files under cmd/, internal/ and pkg/; wrong root %s?", files, root)
	}
}

// TestSharedLeavesImportNoKind fails for each file of a shared leaf that
// imports a package of one of the three kinds: a leaf that did would drag
// that kind into the others.
func TestSharedLeavesImportNoKind(t *testing.T) {
	root := repoRoot(t)
	var dirs []string
	for _, leaf := range sharedLeaves {
		dirs = append(dirs, filepath.Join("internal", leaf))
	}
	forEachImport(t, root, dirs, func(file, imp string) {
		for _, kind := range []string{pipeline, harness, supplychain} {
			if under(imp, kind) {
				t.Errorf("%s imports %s: a shared leaf imports only other shared leaves (docs/layout.md)", file, module+"/"+imp)
			}
		}
	})
}

// TestInternalIsGrouped fails for a folder directly under internal/ that is
// neither one of the three kinds, a listed shared leaf, nor layering: the
// tree is meant to show the architecture.
func TestInternalIsGrouped(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	known := append([]string{"harness", "layering", "pipeline", "supplychain"}, sharedLeaves...)
	seen := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !slices.Contains(known, e.Name()) {
			t.Errorf("internal/%s: put it under the kind that uses it (internal/pipeline/, internal/harness/, internal/supplychain/), or list it as a shared leaf here and in docs/layout.md", e.Name())
			continue
		}
		seen++
	}
	if seen != len(known) {
		t.Errorf("found %d of the %d folders %v under internal/; update sharedLeaves and docs/layout.md when one moves", seen, len(known), known)
	}
}
