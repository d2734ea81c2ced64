package treetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
)

// GodebugResult is one shipped main package's default GODEBUG settings in
// the patched tree and in its pristine twin.
type GodebugResult struct {
	Package  string `json:"package"`
	Patched  string `json:"patched"`
	Pristine string `json:"pristine"`
}

// DefaultGODEBUG is the DefaultGODEBUG the go command computes for each
// main package in tree (`go list -f {{.DefaultGODEBUG}}`): the value
// `go build` stamps into the binary (`go version -m` shows it as
// `build DefaultGODEBUG=`), because both take it from the same place in
// the go command (load.defaultGODEBUG: the toolchain's table of settings,
// the main module's go line or its godebug default, its godebug lines and
// the package's //go:debug directives). Running it with the toolchain that
// builds the binaries costs a package load, not a build.
func (r Runner) DefaultGODEBUG(ctx context.Context, tree string, pkgs []string) (map[string]string, error) {
	out, stderr, err := r.goList(ctx, tree, append([]string{"-e", "-f", "{{.ImportPath}} {{if eq .Name \"main\"}}main{{else}}-{{end}} {{.DefaultGODEBUG}}"}, pkgs...)...)
	if err != nil {
		return nil, fmt.Errorf("DefaultGODEBUG of %s in %s: go list: %v: %s", strings.Join(pkgs, " "), tree, err, strings.TrimSpace(stderr))
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if f[1] != "main" {
			// Not a main package (or none there): no binary, nothing
			// stamped; the build step refuses it, not this comparison.
			got[f[0]] = "(no main package)"
			continue
		}
		got[f[0]] = ""
		if len(f) > 2 {
			got[f[0]] = f[2]
		}
	}
	return got, sc.Err()
}

// compareGODEBUG lists each main package's DefaultGODEBUG in the patched
// tree next to the released tree's (upstream's go.mod and go line) and
// says which differ: a series may raise the go line only with the godebug
// line that keeps upstream's defaults (internal/pipeline/overrides).
func (r Runner) compareGODEBUG(ctx context.Context, patched, released string, pkgs []string) ([]GodebugResult, []string, error) {
	if len(pkgs) == 0 {
		return nil, nil, nil
	}
	p, err := r.DefaultGODEBUG(ctx, patched, pkgs)
	if err != nil {
		return nil, nil, err
	}
	u, err := r.DefaultGODEBUG(ctx, released, pkgs)
	if err != nil {
		return nil, nil, err
	}
	var out []GodebugResult
	var differ []string
	for _, pkg := range sortedKeys(boolSet(p)) {
		g := GodebugResult{Package: pkg, Patched: p[pkg], Pristine: u[pkg]}
		out = append(out, g)
		if g.Patched != g.Pristine {
			differ = append(differ, fmt.Sprintf("DefaultGODEBUG of %s differs from upstream's go line: patched %q, released %q", pkg, g.Patched, g.Pristine))
		}
	}
	return out, differ, nil
}

func boolSet(m map[string]string) map[string]bool {
	s := map[string]bool{}
	for k := range m {
		s[k] = true
	}
	return s
}

// verdict is the comparison as the report words it.
func (g GodebugResult) verdict() string {
	if g.Patched == g.Pristine {
		return "as upstream's go line (" + g.Patched + ")"
	}
	return fmt.Sprintf("DIFFERS: patched %s, pristine %s", g.Patched, g.Pristine)
}
