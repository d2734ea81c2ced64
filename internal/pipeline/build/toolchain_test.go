package build_test

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// upstreamGoLine is Karmada v1.18.2's go line: a release older than the
// toolchain, so settings changed since then must keep their old defaults.
const upstreamGoLine = "1.25.10"

// toolchainTree is a module shaped like an upstream with a version
// variable, at upstream's go line.
func toolchainTree(t *testing.T) (string, *pins.Upstream) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":              "module example.com/up\n\ngo " + upstreamGoLine + "\n",
		"pkg/version/v.go":    "package version\n\nvar gitVersion string\n\nfunc Get() string { return gitVersion }\n",
		"cmd/hello/main.go":   "package main\n\nimport \"example.com/up/pkg/version\"\n\nfunc main() { println(version.Get()) }\n",
		"cmd/hello/helper.go": "package main\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	up := &pins.Upstream{
		Name: "up", Module: "example.com/up", Build: []string{"./cmd/hello"},
		Version: &pins.VersionVars{Package: "pkg/version", Vars: []pins.VersionVar{{Name: "gitVersion", Field: pins.FieldVersion}}},
	}
	return dir, up
}

func buildWith(t *testing.T, tree string, up *pins.Upstream, toolchain string) *buildinfo.BuildInfo {
	t.Helper()
	bins, err := build.Build(context.Background(), build.Options{
		Tree: tree, Upstream: up, Pin: pins.Pin{Version: "v1.18.2", Revision: 1}, Out: t.TempDir(), Toolchain: toolchain,
		Stamp: build.Stamp{Version: "v1.18.2-holdfast.1", Source: build.Source{Commit: "abc"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(bins[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func setting(info *buildinfo.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// TestBuildUsesToolchainKeepsUpstreamGoLine: a shipped binary is compiled
// by build.Toolchain, yet its default GODEBUG settings are those its
// upstream's go line implies, as the toolchain's own table of settings
// (internal/godebugs) documents them, and the same as an older toolchain
// gives for every setting that one knows.
func TestBuildUsesToolchainKeepsUpstreamGoLine(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	tree, up := toolchainTree(t)
	goMod, _ := os.ReadFile(filepath.Join(tree, "go.mod"))

	info := buildWith(t, tree, up, "")
	if info.GoVersion != build.Toolchain {
		t.Errorf("binary built with %s, want %s", info.GoVersion, build.Toolchain)
	}
	if after, _ := os.ReadFile(filepath.Join(tree, "go.mod")); string(after) != string(goMod) {
		t.Errorf("the build changed the tree's go.mod:\n%s", after)
	}
	g, err := build.ResolveGo(context.Background(), build.Toolchain)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultGODEBUG(t, g.GOROOT, upstreamGoLine)
	if want == "" {
		t.Fatalf("%s changed no GODEBUG default since go %s: the check below would show nothing", build.Toolchain, upstreamGoLine)
	}
	got := setting(info, "DefaultGODEBUG")
	if got != want {
		t.Errorf("DefaultGODEBUG:\n got %s\nwant %s (go %s per %s's internal/godebugs)", got, want, upstreamGoLine, build.Toolchain)
	}

	// The same tree built by the Go running this test (an older release):
	// every setting it records, the new toolchain records with the same
	// value; the new toolchain adds only settings the old one lacks.
	older := buildWith(t, tree, up, runtime.Version())
	if older.GoVersion == build.Toolchain {
		t.Skipf("the test runs on %s itself: no older toolchain to compare with", build.Toolchain)
	}
	gotSet := godebugMap(got)
	for k, v := range godebugMap(setting(older, "DefaultGODEBUG")) {
		if gotSet[k] != v {
			t.Errorf("GODEBUG %s: %s gives %q, %s gives %q", k, older.GoVersion, v, build.Toolchain, gotSet[k])
		}
	}
}

func godebugMap(s string) map[string]string {
	m := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// defaultGODEBUG derives, from the toolchain's table of settings, the
// defaults for a main module at goLine: each setting whose default changed
// after that release keeps its Old value, in name order (what the go
// command records). Read by parsing the source, so the table is the
// toolchain's own, not a copy.
func defaultGODEBUG(t *testing.T, goroot, goLine string) string {
	t.Helper()
	parts := strings.Split(goLine, ".")
	minor, err := strconv.Atoi(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(goroot, "src", "internal", "godebugs", "table.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var settings []string
	ast.Inspect(f, func(n ast.Node) bool {
		table, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if at, ok := table.Type.(*ast.ArrayType); !ok || fmt.Sprint(at.Elt) != "Info" {
			return true
		}
		for _, e := range table.Elts {
			fields := map[string]string{}
			for _, fe := range e.(*ast.CompositeLit).Elts {
				kv := fe.(*ast.KeyValueExpr)
				if v, ok := kv.Value.(*ast.BasicLit); ok {
					fields[kv.Key.(*ast.Ident).Name] = strings.Trim(v.Value, `"`)
				}
			}
			if changed, _ := strconv.Atoi(fields["Changed"]); changed > minor {
				settings = append(settings, fields["Name"]+"="+fields["Old"])
			}
		}
		return false
	})
	if len(settings) == 0 && !strings.Contains(readFile(t, path), "Changed:") {
		t.Fatalf("%s: no settings with Changed found; the table's format changed", path)
	}
	slices.Sort(settings)
	return strings.Join(settings, ",")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestBuildUpstreamGoUsesTheTreesGoLine: a pristine twin built with
// build.UpstreamGo is compiled by the release its tree's go line names, not
// build.Toolchain: the side-by-side table compares holdfast with upstream as
// upstream's own build compiles it. The tree names the Go running this test,
// so no toolchain is fetched.
func TestBuildUpstreamGoUsesTheTreesGoLine(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	local := runtime.Version()
	if local == build.Toolchain || !strings.HasPrefix(local, "go1.") || strings.ContainsAny(local, " -X") {
		t.Skipf("the test runs on %s: no release apart from %s to name in the go line", local, build.Toolchain)
	}
	tree, up := toolchainTree(t)
	goMod := "module example.com/up\n\ngo " + strings.TrimPrefix(local, "go") + "\n"
	if err := os.WriteFile(filepath.Join(tree, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	if info := buildWith(t, tree, up, build.UpstreamGo); info.GoVersion != local {
		t.Errorf("built with %s, want %s (the tree's go line)", info.GoVersion, local)
	}
}
