package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/holdfast-dist/holdfast"

// TestNothingBelowImportsE2E fails for each Go file under cmd/, internal/ or
// pkg/ that imports a package of holdfast's e2e/ tree.
func TestNothingBelowImportsE2E(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "e2e")); err != nil {
		t.Fatalf("repository root %s: no e2e/ (%v); the test must run from internal/layering", root, err)
	}
	files := 0
	for _, dir := range []string{"cmd", "internal", "pkg"} {
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
				if p == module+"/e2e" || strings.HasPrefix(p, module+"/e2e/") {
					t.Errorf("%s imports %s: cmd/, internal/ and pkg/ must not import e2e/ (move what both need under internal/)", rel, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A walk that found nothing (a moved test, a wrong root) must not pass.
	if files < 100 {
		t.Fatalf("parsed only %d Go files under cmd/, internal/ and pkg/; wrong root %s?", files, root)
	}
}
