package carry

import (
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
)

// LibsDir is where carried libraries live in an upstream tree.
const LibsDir = "third_party/holdfast"

// ImportPath is the import path of a carried library inside the upstream
// module.
func ImportPath(upstreamModule, lib string) string {
	return upstreamModule + "/" + LibsDir + "/" + lib
}

// Rewriter maps holdfast's pkg/<lib> import paths to their carried paths.
type Rewriter struct {
	// Self is holdfast's module path.
	Self string
	// Upstream is the module the libraries are carried into.
	Upstream string
	// Libs are the carried libraries; importing any other holdfast
	// package from carried code is an error.
	Libs []string
}

func (rw Rewriter) carried(importPath string) (string, bool) {
	for _, lib := range rw.Libs {
		from := rw.Self + "/pkg/" + lib
		if importPath == from || strings.HasPrefix(importPath, from+"/") {
			return ImportPath(rw.Upstream, lib) + strings.TrimPrefix(importPath, from), true
		}
	}
	return "", false
}

func isSelf(self, importPath string) bool {
	return importPath == self || strings.HasPrefix(importPath, self+"/")
}

// Rewrite returns the Go source src with every import of a carried
// library rewritten to its carried path, gofmt'd.
func (rw Rewriter) Rewrite(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), src...)
	// Replace from the last import to the first so that earlier offsets
	// stay valid.
	for i := len(f.Imports) - 1; i >= 0; i-- {
		lit := f.Imports[i].Path
		p, err := strconv.Unquote(lit.Value)
		if err != nil {
			return nil, err
		}
		if !isSelf(rw.Self, p) {
			continue
		}
		to, ok := rw.carried(p)
		if !ok {
			return nil, fmt.Errorf("imports %s, which is not carried into %s (carry lists: %s)", p, rw.Upstream, strings.Join(rw.Libs, ", "))
		}
		start, end := fset.Position(lit.Pos()).Offset, fset.Position(lit.End()).Offset
		out = append(out[:start], append([]byte(strconv.Quote(to)), out[end:]...)...)
	}
	return format.Source(out)
}

// HostOnlySuffix ends the name of a library test file that stays in
// holdfast's module: a test that needs a module not every upstream's go.sum
// has (client-go's SPDY round tripper pulls in github.com/moby/spdystream,
// which worker-operator v1.6.4 lacks), but also needs the library's
// unexported internals, so it cannot move to a package of its own as
// internal/harness/membercredcheck's tests did. It runs in `make unit` and,
// against every upstream's dependency versions, in `make compat`; Libs leaves
// it out of the trees.
const HostOnlySuffix = "_hostonly_test.go"

// IsHostOnly reports whether the library file rel stays out of the trees.
func IsHostOnly(rel string) bool { return strings.HasSuffix(rel, HostOnlySuffix) }

// Libs copies each library root/pkg/<lib> into tree/third_party/holdfast/<lib>
// with imports rewritten, and returns the tree-relative paths it wrote.
func Libs(tree, root string, rw Rewriter) ([]string, error) {
	var written []string
	for _, lib := range rw.Libs {
		src := filepath.Join(root, "pkg", lib)
		files, err := fscopy.Files(src)
		if err != nil {
			return nil, err
		}
		if !containsGo(files) {
			return nil, fmt.Errorf("carry %s: %s has no Go files", lib, src)
		}
		dst := filepath.Join(tree, filepath.FromSlash(LibsDir), lib)
		if _, err := os.Stat(dst); err == nil {
			return nil, fmt.Errorf("carry %s: %s already exists in the upstream tree", lib, path.Join(LibsDir, lib))
		}
		files, err = fscopy.Tree(dst, src, fscopy.Options{Skip: IsHostOnly, Transform: func(rel string, data []byte) ([]byte, error) {
			if !strings.HasSuffix(rel, ".go") {
				return data, nil
			}
			return rw.Rewrite(rel, data)
		}})
		if err != nil {
			return nil, fmt.Errorf("carry %s: %w", lib, err)
		}
		for _, f := range files {
			written = append(written, path.Join(LibsDir, lib, f))
		}
	}
	sort.Strings(written)
	return written, nil
}

func containsGo(files []string) bool {
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			return true
		}
	}
	return false
}

// Overlay copies every file below src into the tree at the same relative
// path and returns those paths. A missing src lays nothing. It refuses to
// replace a file the tree already has, and refuses Go files that import
// holdfast's module (self): overlay code is written against the carried
// path, as it will be read in the patched tree.
func Overlay(tree, src, self string) ([]string, error) {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil, nil
	}
	written, err := fscopy.Tree(tree, src, fscopy.Options{
		NoReplace: true,
		Transform: func(rel string, data []byte) ([]byte, error) {
			if strings.HasSuffix(rel, ".go") {
				if err := refuseSelfImports(rel, data, self); err != nil {
					return nil, err
				}
			}
			return data, nil
		},
	})
	if errors.Is(err, fscopy.ErrExists) {
		return nil, fmt.Errorf("%w; the overlay only adds files, an upstream file is changed by a patch", err)
	}
	return written, err
}

func refuseSelfImports(name string, src []byte, self string) error {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	if err != nil {
		return err
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return err
		}
		if isSelf(self, p) {
			return fmt.Errorf("imports %s; overlay files import carried libraries by their path in the upstream module (<module>/%s/<lib>)", p, LibsDir)
		}
	}
	return nil
}
