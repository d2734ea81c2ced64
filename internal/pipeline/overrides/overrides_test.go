package overrides

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
)

const sample = `# reviewed: see docs/overrides.md
golang.org/x/net v0.38.0
	fixes GO-2025-3595 CVE-2025-22872
	drop-when upstream requires >= v0.38.0
	why smallest fixed version; x/net tags minors only

google.golang.org/grpc v1.79.3
	fixes GO-2026-4762 CVE-2026-33186
	drop-when upstream requires >= v1.79.3
	why the patch release of upstream's minor (v1.79.x), not v1.80.0
`

func TestParse(t *testing.T) {
	f, err := Parse("overrides", []byte("go 1.26.0\n\twhy x/net v0.60.0 says go 1.26.0\n\n"+sample+"\nwaive GO-2026-6603\n\tblocker breaks\n\twhy x/net v0.60.0 drops http2.Transport.X, which pkg/y calls\n\tends-when upstream stops calling it\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Entries
	if want := (&GoLine{Version: "1.26.0", Why: "x/net v0.60.0 says go 1.26.0", Line: 1}); !reflect.DeepEqual(f.Go, want) {
		t.Errorf("go %+v, want %+v", f.Go, want)
	}
	if want := []Waiver{{ID: "GO-2026-6603", Blocker: "breaks", Why: "x/net v0.60.0 drops http2.Transport.X, which pkg/y calls", EndsWhen: "upstream stops calling it", Line: 15}}; !reflect.DeepEqual(f.Waivers, want) {
		t.Errorf("waivers %+v, want %+v", f.Waivers, want)
	}
	want := []Entry{
		{Module: "golang.org/x/net", Version: "v0.38.0", Fixes: []string{"GO-2025-3595", "CVE-2025-22872"}, DropWhen: "v0.38.0", Why: "smallest fixed version; x/net tags minors only", Line: 5},
		{Module: "google.golang.org/grpc", Version: "v1.79.3", Fixes: []string{"GO-2026-4762", "CVE-2026-33186"}, DropWhen: "v1.79.3", Why: "the patch release of upstream's minor (v1.79.x), not v1.80.0", Line: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseRefuses(t *testing.T) {
	entry := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	for _, c := range []struct{ name, in, want string }{
		{"no why", entry("golang.org/x/net v0.38.0", "\tfixes GO-2025-3595", "\tdrop-when upstream requires >= v0.38.0"), "overrides:1: override of golang.org/x/net has no why line"},
		{"no fixes", entry("golang.org/x/net v0.38.0", "\tdrop-when upstream requires >= v0.38.0", "\twhy x"), "has no fixes line"},
		{"CVE only", entry("golang.org/x/net v0.38.0", "\tfixes CVE-2025-22872"), "names no GO- advisory"},
		{"not an ID", entry("golang.org/x/net v0.38.0", "\tfixes GO-2025-3595 the-bad-one"), `"the-bad-one" is not an advisory ID`},
		{"pseudo-version", entry("golang.org/x/net v0.0.0-20250101000000-abcdefabcdef"), "want a released version"},
		{"shorthand", entry("golang.org/x/net v0.38"), "overrides:1:"},
		{"bad drop-when", entry("golang.org/x/net v0.38.0", "\tfixes GO-2025-3595", "\tdrop-when v0.38.0"), "want `drop-when upstream requires >= VERSION`"},
		{"drop-when above", entry("golang.org/x/net v0.38.0", "\tfixes GO-2025-3595", "\tdrop-when upstream requires >= v0.39.0"), "drop-when v0.39.0 is above the override's own v0.38.0"},
		{"twice", entry("golang.org/x/net v0.38.0", "\tfixes GO-2025-3595", "\tdrop-when upstream requires >= v0.38.0", "\twhy x", "golang.org/x/net v0.39.0"), "overrides:5: golang.org/x/net is overridden twice (first on line 1)"},
		{"field twice", entry("golang.org/x/net v0.38.0", "\twhy x", "\twhy y"), "a second why line"},
		{"unknown field", entry("golang.org/x/net v0.38.0", "\treason x"), `unknown field "reason"`},
		{"field first", entry("\tfixes GO-2025-3595"), "overrides:1: an indented field before any `MODULE VERSION`, `go` or `waive` line"},
		{"three words", entry("golang.org/x/net v0.38.0 extra"), "want `MODULE VERSION`"},
		{"waiver without why", entry("waive GO-2026-6603"), "overrides:1: waiver of GO-2026-6603 has no why line"},
		{"waiver of a CVE", entry("waive CVE-2026-78659", "\twhy x"), "want `waive GO-YYYY-NNNN`"},
		{"waiver with a field", entry("waive GO-2026-6603", "\tfixes GO-2026-6603"), `overrides:2: waiver of GO-2026-6603: unknown field "fixes" (want blocker, why, ends-when)`},
		{"waiver why twice", entry("waive GO-2026-6603", "\twhy x", "\twhy y"), "overrides:3: waiver of GO-2026-6603: a second why line"},
		{"waived twice", entry("waive GO-2026-6603", "\tblocker breaks", "\twhy x", "\tends-when y", "waive GO-2026-6603", "\twhy y"), "overrides:5: GO-2026-6603 is waived twice (first on line 1)"},
		{"waiver for the go line", entry("waive GO-2026-6603", "\twhy fixed only in x/net v0.60.0, whose go.mod says go 1.26.0: taking it would raise Karmada's go line"), "overrides:1: waiver of GO-2026-6603: its reason is the go line (\"go.mod says go 1.\")"},
		{"waiver for GODEBUG", entry("waive GO-2026-6603", "\twhy it would change the binaries' GODEBUG defaults"), "its reason is the go line"},
		{"blocker go-line", entry("waive GO-2026-6603", "\tblocker go-line", "\twhy x", "\tends-when y"), "overrides:1: waiver of GO-2026-6603: its reason is the go line (\"blocker go-line\")"},
		{"no blocker", entry("waive GO-2026-6603", "\twhy the fix breaks pkg/x", "\tends-when y"), "overrides:1: waiver of GO-2026-6603 has no blocker line (want one of breaks, unavailable)"},
		{"unknown blocker", entry("waive GO-2026-6603", "\tblocker later", "\twhy x", "\tends-when y"), `waiver of GO-2026-6603: unknown blocker "later" (want one of breaks, unavailable)`},
		{"no ends-when", entry("waive GO-2026-6603", "\tblocker unavailable", "\twhy x"), "overrides:1: waiver of GO-2026-6603 has no ends-when line"},
		{"go shorthand", entry("go 1.26"), "overrides:1: want `go 1.N.P` (a go line as go.mod writes it), found \"go 1.26\""},
		{"go rc", entry("go 1.26rc1"), "want `go 1.N.P`"},
		{"go too old", entry("go 1.22.0", "\twhy x"), "overrides:1: go 1.22.0: a raised go line needs go 1.23 or later"},
		{"go without why", entry("go 1.26.0", "", "golang.org/x/net v0.38.0"), "overrides:1: go 1.26.0 has no why line"},
		{"go with a field", entry("go 1.26.0", "\tfixes GO-2026-6603"), "overrides:2: go 1.26.0: want one non-empty why line"},
		{"go twice", entry("go 1.26.0", "\twhy x", "go 1.27.0", "\twhy y"), "overrides:3: a second go line (first on line 1)"},
	} {
		if _, err := Parse("overrides", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	goMod := []byte("module example.com/up\n\ngo 1.25.0\n\nrequire (\n\tgolang.org/x/net v0.37.0\n\tgoogle.golang.org/grpc v1.80.0 // indirect\n\tgolang.org/x/text v0.20.0\n)\n\nreplace golang.org/x/text => ./third_party/text\n")
	entries := []Entry{
		{Module: "golang.org/x/net", Version: "v0.38.0", DropWhen: "v0.38.0"},
		{Module: "google.golang.org/grpc", Version: "v1.79.3", DropWhen: "v1.79.3"},
		{Module: "golang.org/x/crypto", Version: "v0.35.0", DropWhen: "v0.35.0"},
		{Module: "golang.org/x/text", Version: "v0.21.0", DropWhen: "v0.21.0"},
	}
	vs, err := Check("go.mod", goMod, entries)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Entry.Module+" "+v.Upstream+" "+string(v.Status))
	}
	want := []string{
		"golang.org/x/net v0.37.0 still needed",
		"google.golang.org/grpc v1.80.0 superseded by upstream",
		"golang.org/x/crypto  conflicts",
		"golang.org/x/text v0.20.0 conflicts",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check:\n got %q\nwant %q", got, want)
	}
}

// TestApply raises a requirement with the go command against a proxy and
// checksum database, reports the module the go command raised with it,
// leaves a superseded entry alone and refuses a conflicting one.
func TestApply(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	proxy := modproxytest.New(t)
	dep := map[string]string{"dep.go": "package dep\n\nfunc V() string { return \"x\" }\n"}
	proxy.Add(t, "example.com/other", "v1.0.0", map[string]string{"other.go": "package other\n"})
	proxy.Add(t, "example.com/other", "v1.2.0", map[string]string{"other.go": "package other\n"})
	proxy.Add(t, "example.com/dep", "v1.0.0", copyMap(dep))
	proxy.Add(t, "example.com/dep", "v1.0.1", withGoMod(dep, "module example.com/dep\n\ngo 1.22\n\nrequire example.com/other v1.2.0\n"))
	proxy.Add(t, "example.com/dep", "v1.3.0", withGoMod(dep, "module example.com/dep\n\ngo 1.99\n"))
	env := append(os.Environ(), append(proxy.Env(), "GOSUMDB="+proxy.ChecksumDB(), "GOWORK=off")...)
	g := Go{Env: func(context.Context, string, string) ([]string, error) { return env, nil }}

	newTree := func() string {
		dir := t.TempDir()
		write(t, dir, "go.mod", "module example.com/up\n\ngo 1.22\n\nrequire (\n\texample.com/dep v1.0.0\n\texample.com/other v1.0.0\n)\n")
		write(t, dir, "main.go", "package main\n\nimport (\n\t\"example.com/dep\"\n\t_ \"example.com/other\"\n)\n\nfunc main() { println(dep.V()) }\n")
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod tidy: %v\n%s", err, out)
		}
		return dir
	}
	fix := Entry{Module: "example.com/dep", Version: "v1.0.1", Fixes: []string{"GO-2099-0001"}, DropWhen: "v1.0.1", Why: "x", Line: 1}
	old := Entry{Module: "example.com/other", Version: "v1.0.0", Fixes: []string{"GO-2099-0002"}, DropWhen: "v1.0.0", Why: "x", Line: 5}

	dir := newTree()
	res, err := Apply(context.Background(), dir, Plan{Entries: []Entry{fix, old}}, g)
	if err != nil {
		t.Fatal(err)
	}
	wantChanges := []Change{{"example.com/dep", "v1.0.0", "v1.0.1"}, {"example.com/other", "v1.0.0", "v1.2.0"}}
	if !reflect.DeepEqual(res.Changes, wantChanges) {
		t.Errorf("changes %+v, want %+v", res.Changes, wantChanges)
	}
	if len(res.Applied) != 1 || res.Applied[0].Entry.Module != "example.com/dep" || res.Verdicts[1].Status != Superseded {
		t.Errorf("applied %+v, verdicts %+v: want dep applied, other superseded", res.Applied, res.Verdicts)
	}
	build := exec.Command("go", "build", "-o", os.DevNull, ".")
	build.Dir, build.Env = dir, append(env, "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("the tree does not build with go.mod and go.sum as Apply left them: %v\n%s", err, out)
	}

	// A version that needs a newer Go than the tree's go line.
	newer := fix
	newer.Version, newer.DropWhen = "v1.3.0", "v1.3.0"
	if _, err := Apply(context.Background(), newTree(), Plan{Entries: []Entry{newer}}, g); err == nil || !strings.Contains(err.Error(), "go get example.com/dep@v1.3.0") || !strings.Contains(err.Error(), "requires go >= 1.99") {
		t.Errorf("an override needing go 1.99: err = %v", err)
	}
	// A module upstream does not require.
	absent := Entry{Module: "example.com/absent", Version: "v1.0.0", DropWhen: "v1.0.0", Line: 9}
	if _, err := Apply(context.Background(), newTree(), Plan{Entries: []Entry{absent}}, g); err == nil || !strings.Contains(err.Error(), "override example.com/absent v1.0.0 (line 9): upstream does not require") {
		t.Errorf("an override of a module not required: err = %v", err)
	}
}

func TestDiffRefusesAGoLineNoEntrySays(t *testing.T) {
	before := []byte("module m\n\ngo 1.22\n\nrequire a.example/x v1.0.0\n")
	after := []byte("module m\n\ngo 1.24.0\n\nrequire a.example/x v1.1.0\n")
	if _, err := diff("go.mod", before, after, "1.22"); err == nil || !strings.Contains(err.Error(), `moved the go line from "1.22" to "1.24.0": a module needs a newer Go than upstream's go line; raise it with a `+"`go 1.24.0`"+` entry`) {
		t.Errorf("no go entry: err = %v", err)
	}
	if _, err := diff("go.mod", before, after, "1.23.0"); err == nil || !strings.Contains(err.Error(), `past the go entry's "1.23.0"`) {
		t.Errorf("a go entry below what a module needs: err = %v", err)
	}
	if _, err := diff("go.mod", before, after, "1.24.0"); err != nil {
		t.Errorf("the go entry's line: %v", err)
	}
	withToolchain := []byte("module m\n\ngo 1.24.0\n\ntoolchain go1.26.8\n\nrequire a.example/x v1.1.0\n")
	if _, err := diff("go.mod", before, withToolchain, "1.24.0"); err == nil || !strings.Contains(err.Error(), `moved the toolchain line from "" to "go1.26.8"`) {
		t.Errorf("a toolchain line: err = %v", err)
	}
}

// TestApplyRaisesTheGoLineAndKeepsGODEBUG takes a fixed version whose
// go.mod says a newer go than the tree's with a go entry: go.mod then has
// the entry's go line and `godebug default=go<the tree's minor>`, builds,
// and the go command derives the same DefaultGODEBUG for the main package
// as from the tree's own go line.
func TestApplyRaisesTheGoLineAndKeepsGODEBUG(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	proxy := modproxytest.New(t)
	dep := map[string]string{"dep.go": "package dep\n\nfunc V() string { return \"x\" }\n"}
	proxy.Add(t, "example.com/dep", "v1.0.0", copyMap(dep))
	// go 1.25.0: the oldest Go that builds holdfast, so the go command
	// running this test never fetches a toolchain.
	proxy.Add(t, "example.com/dep", "v1.2.0", withGoMod(dep, "module example.com/dep\n\ngo 1.25.0\n"))
	env := append(os.Environ(), append(proxy.Env(), "GOSUMDB="+proxy.ChecksumDB(), "GOWORK=off", "GOTOOLCHAIN=local")...)
	g := Go{Env: func(context.Context, string, string) ([]string, error) { return env, nil }}
	newTree := func(goMod string) string {
		dir := t.TempDir()
		write(t, dir, "go.mod", goMod)
		write(t, dir, "main.go", "package main\n\nimport \"example.com/dep\"\n\nfunc main() { println(dep.V()) }\n")
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod tidy: %v\n%s", err, out)
		}
		return dir
	}
	defaultGODEBUG := func(dir string) string {
		cmd := exec.Command("go", "list", "-f", "{{.DefaultGODEBUG}}", ".")
		cmd.Dir, cmd.Env = dir, append(env, "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	const upstream = "module example.com/up\n\ngo 1.22.3 // keep in sync\n\nrequire example.com/dep v1.0.0\n"
	want := defaultGODEBUG(newTree(upstream))
	if want == "" {
		t.Fatal("go 1.22.3 gives no DefaultGODEBUG: the test would compare nothing")
	}

	dir := newTree(upstream)
	fix := Entry{Module: "example.com/dep", Version: "v1.2.0", Fixes: []string{"GO-2099-0001"}, DropWhen: "v1.2.0", Why: "x", Line: 4}
	goLine := &GoLine{Version: "1.25.0", Why: "example.com/dep v1.2.0 says go 1.25.0", Line: 1}
	res, err := Apply(context.Background(), dir, Plan{Go: goLine, Entries: []Entry{fix}}, g)
	if err != nil {
		t.Fatal(err)
	}
	if res.GoLine == nil || res.GoLine.String() != "1.22.3 => 1.25.0 (godebug default=go1.22; example.com/dep v1.2.0 says go 1.25.0)" {
		t.Errorf("go line change %+v", res.GoLine)
	}
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"go 1.25.0 // keep in sync\n", "godebug default=go1.22\n", "example.com/dep v1.2.0\n"} {
		if !strings.Contains(string(data), line) {
			t.Errorf("go.mod has no %q:\n%s", line, data)
		}
	}
	if got := defaultGODEBUG(dir); got != want {
		t.Errorf("DefaultGODEBUG with the raised go line and the godebug line:\n got %s\nwant %s (go 1.22.3's)", got, want)
	}
	build := exec.Command("go", "build", "-o", os.DevNull, ".")
	build.Dir, build.Env = dir, append(env, "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("the tree does not build with go.mod and go.sum as Apply left them: %v\n%s", err, out)
	}

	// Upstream's own godebug default decides and is kept.
	own := newTree("module example.com/up\n\ngo 1.22.3\n\ngodebug default=go1.21\n\nrequire example.com/dep v1.0.0\n")
	res, err = Apply(context.Background(), own, Plan{Go: goLine, Entries: []Entry{fix}}, g)
	if err != nil {
		t.Fatal(err)
	}
	if res.GoLine.Godebug != "default=go1.21 (upstream's)" {
		t.Errorf("upstream's godebug default: recorded %q", res.GoLine.Godebug)
	}
	// A go line upstream already has changes nothing.
	same := newTree("module example.com/up\n\ngo 1.25.0\n\nrequire example.com/dep v1.0.0\n")
	if res, err = Apply(context.Background(), same, Plan{Go: goLine, Entries: []Entry{fix}}, g); err != nil {
		t.Fatal(err)
	}
	if res.GoLine != nil || !strings.Contains(res.GoSuperseded, "drop the go entry") {
		t.Errorf("a go entry at upstream's line: change %+v, superseded %q", res.GoLine, res.GoSuperseded)
	}
	// Without the go entry, the same fix stops the apply.
	if _, err := Apply(context.Background(), newTree(upstream), Plan{Entries: []Entry{fix}}, g); err == nil || !strings.Contains(err.Error(), "raise it with a `go 1.25.0` entry") {
		t.Errorf("no go entry: err = %v", err)
	}
}

func copyMap(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func withGoMod(m map[string]string, goMod string) map[string]string {
	out := copyMap(m)
	out["go.mod"] = goMod
	return out
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesOverridesKeepTheRules reads every series' overrides file in the
// repository: a waiver there that gives the go line as its reason (the
// fix needs a newer go line) is refused, as apply and the release gate
// refuse it.
func TestSeriesOverridesKeepTheRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "patches", "*", "*", FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no patches/*/*/overrides: the test would check nothing")
	}
	for _, path := range files {
		if _, _, err := Load(path); err != nil {
			t.Error(err)
		}
	}
}
