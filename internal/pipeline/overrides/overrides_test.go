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
	f, err := Parse("overrides", []byte(sample+"\nwaive GO-2026-6603\n\twhy fixed only in x/net v0.60.0, which needs go 1.26\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Entries
	if want := []Waiver{{ID: "GO-2026-6603", Why: "fixed only in x/net v0.60.0, which needs go 1.26", Line: 12}}; !reflect.DeepEqual(f.Waivers, want) {
		t.Errorf("waivers %+v, want %+v", f.Waivers, want)
	}
	want := []Entry{
		{Module: "golang.org/x/net", Version: "v0.38.0", Fixes: []string{"GO-2025-3595", "CVE-2025-22872"}, DropWhen: "v0.38.0", Why: "smallest fixed version; x/net tags minors only", Line: 2},
		{Module: "google.golang.org/grpc", Version: "v1.79.3", Fixes: []string{"GO-2026-4762", "CVE-2026-33186"}, DropWhen: "v1.79.3", Why: "the patch release of upstream's minor (v1.79.x), not v1.80.0", Line: 7},
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
		{"field first", entry("\tfixes GO-2025-3595"), "before any `MODULE VERSION` line"},
		{"three words", entry("golang.org/x/net v0.38.0 extra"), "want `MODULE VERSION`"},
		{"waiver without why", entry("waive GO-2026-6603"), "waiver of GO-2026-6603 has no why line"},
		{"waiver of a CVE", entry("waive CVE-2026-78659", "\twhy x"), "want `waive GO-YYYY-NNNN`"},
		{"waiver with a field", entry("waive GO-2026-6603", "\tfixes GO-2026-6603"), "want one non-empty why line"},
		{"waived twice", entry("waive GO-2026-6603", "\twhy x", "waive GO-2026-6603", "\twhy y"), "GO-2026-6603 is waived twice"},
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
	res, err := Apply(context.Background(), dir, []Entry{fix, old}, g)
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
	if _, err := Apply(context.Background(), newTree(), []Entry{newer}, g); err == nil || !strings.Contains(err.Error(), "go get example.com/dep@v1.3.0") || !strings.Contains(err.Error(), "requires go >= 1.99") {
		t.Errorf("an override needing go 1.99: err = %v", err)
	}
	// A module upstream does not require.
	absent := Entry{Module: "example.com/absent", Version: "v1.0.0", DropWhen: "v1.0.0", Line: 9}
	if _, err := Apply(context.Background(), newTree(), []Entry{absent}, g); err == nil || !strings.Contains(err.Error(), "override example.com/absent v1.0.0 (line 9): upstream does not require") {
		t.Errorf("an override of a module not required: err = %v", err)
	}
}

func TestDiffRefusesAMovedGoLine(t *testing.T) {
	before := []byte("module m\n\ngo 1.22\n\nrequire a.example/x v1.0.0\n")
	after := []byte("module m\n\ngo 1.24.0\n\nrequire a.example/x v1.1.0\n")
	if _, err := diff("go.mod", before, after); err == nil || !strings.Contains(err.Error(), `moved the go line from "1.22" to "1.24.0"`) {
		t.Errorf("err = %v", err)
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
