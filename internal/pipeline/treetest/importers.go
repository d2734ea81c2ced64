package treetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
)

// overriddenModules reads the module paths of a tree's provenance override
// lines ("MODULE FROM => TO (why)").
func overriddenModules(lines []string) []string {
	var mods []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			mods = append(mods, f[0])
		}
	}
	return mods
}

// OverrideImporters lists the packages of the tree's own module that import
// (in code or tests) a package of a module the overrides moved: the callers
// whose tests show that the new versions did not change upstream's
// behaviour. Patterns are relative to the tree root, as the plan's.
func (r Runner) OverrideImporters(ctx context.Context, tree string, modules []string) ([]string, error) {
	if len(modules) == 0 {
		return nil, nil
	}
	// The files GoTest compiles (CGO_ENABLED=0, as the build), so the
	// imports are the ones those tests see.
	out, stderr, err := r.goList(ctx, tree, "-e", "-f",
		`{{.Module.Path}} {{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	if err != nil {
		return nil, fmt.Errorf("listing the importers of %s in %s: go list: %v: %s", strings.Join(modules, ", "), tree, err, strings.TrimSpace(stderr))
	}
	set := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		main, pkg := f[0], f[1]
		for _, imp := range f[2:] {
			if inAny(imp, modules) {
				rel := strings.TrimPrefix(strings.TrimPrefix(pkg, main), "/")
				if rel == "" {
					rel = "."
				}
				set[pkgPattern(rel)] = true
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	pkgs := make([]string, 0, len(set))
	for p := range set {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// inAny reports whether package imp belongs to one of the module paths
// (by path prefix: a nested module's packages count for its parent too,
// which only adds callers).
func inAny(imp string, modules []string) bool {
	for _, m := range modules {
		if imp == m || strings.HasPrefix(imp, m+"/") {
			return true
		}
	}
	return false
}

// goList runs `go list ARGS` in tree with the runner's Go (the toolchain
// that builds the binaries, when set) and CGO_ENABLED=0, as the build.
func (r Runner) goList(ctx context.Context, tree string, args ...string) ([]byte, string, error) {
	goBin, env := "go", envOrOS(r.Env)
	if r.Toolchain != "" {
		g, err := build.ResolveGo(ctx, r.Toolchain)
		if err != nil {
			return nil, "", err
		}
		goBin, env = g.Bin, g.Env(env)
	}
	cmd := exec.CommandContext(ctx, goBin, append([]string{"list"}, args...)...)
	cmd.Dir, cmd.Env = tree, append(env, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}
