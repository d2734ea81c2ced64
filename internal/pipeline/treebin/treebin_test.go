package treebin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

const fakeModule = "example.com/fake"

var fakeUpstream = &pins.Upstream{
	Name:   "fake",
	Module: fakeModule,
	// The build line of pins.txt, which Ensure must ignore.
	Build: []string{"./cmd/shipped"},
	Version: &pins.VersionVars{Package: "pkg/version", Vars: []pins.VersionVar{
		{Name: "gitVersion", Field: pins.FieldVersion},
		{Name: "gitCommit", Field: pins.FieldCommit},
		{Name: "buildDate", Field: pins.FieldBuildDate},
	}},
}

// fakeTree writes a module with two commands that print the version
// variables, and the provenance rec.
func fakeTree(t *testing.T, rec provenance.Record) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":              "module " + fakeModule + "\n\ngo 1.22\n",
		"pkg/version/v.go":    "package version\n\nvar gitVersion, gitCommit, buildDate string\n\nfunc String() string { return gitVersion + \" \" + gitCommit + \" \" + buildDate }\n",
		"cmd/a/main.go":       "package main\n\nimport \"" + fakeModule + "/pkg/version\"\n\nfunc main() { println(\"a\", version.String()) }\n",
		"cmd/b/main.go":       "package main\n\nimport \"" + fakeModule + "/pkg/version\"\n\nfunc main() { println(\"b\", version.String()) }\n",
		"cmd/shipped/main.go": "package main\n\nfunc main() {}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := provenance.Write(dir, rec); err != nil {
		t.Fatal(err)
	}
	return dir
}

func patchedRecord() provenance.Record {
	return provenance.Record{
		Kind: provenance.Patched, Upstream: "fake", Module: fakeModule, Version: "v1.2.3",
		Revision: 1, HoldfastVersion: "v1.2.3-holdfast.1", SeriesHash: "h1:bXnK2BeQ6Zufl88qP3sumw58JrNBUrgFE/GeabUV1Bc=",
	}
}

func run(t *testing.T, path string) string {
	t.Helper()
	// println writes to stderr.
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestEnsureBuildsOnceAndStampsTheTree builds two binaries not on the build
// line, checks their version stamp comes from the tree alone, then checks
// a second call is a cache hit and a changed provenance a new build.
func TestEnsureBuildsOnceAndStampsTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles two programs")
	}
	ctx := context.Background()
	root := t.TempDir()
	tree := fakeTree(t, patchedRecord())
	req := Request{Root: root, Tree: tree, Upstream: fakeUpstream, Packages: []string{"./cmd/a=fake-a", "./cmd/b"}}

	first, err := Ensure(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Built {
		t.Fatal("first Ensure reported a cache hit in an empty cache")
	}
	if got := len(first.Paths); got != 2 {
		t.Fatalf("got %d binaries, want 2: %v", got, first.Paths)
	}
	if _, ok := first.Paths["shipped"]; ok {
		t.Error("built the pins.txt build line's binary")
	}
	if got, want := run(t, first.Paths["fake-a"]), "a v1.2.3-holdfast.1 holdfast:unknown,series:6d79cad81790 1970-01-01T00:00:00Z"; got != want {
		t.Errorf("fake-a printed %q, want %q", got, want)
	}
	if got := run(t, first.Paths["b"]); !strings.HasPrefix(got, "b v1.2.3-holdfast.1 ") {
		t.Errorf("b printed %q", got)
	}
	if !strings.HasPrefix(filepath.Base(first.Dir), "fake-v1.2.3-") {
		t.Errorf("cache folder %s is not named after the tree", first.Dir)
	}

	again, err := Ensure(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Built || again.Dir != first.Dir {
		t.Errorf("second Ensure: built=%v dir=%s, want a cache hit in %s", again.Built, again.Dir, first.Dir)
	}

	// Another series is another tree: a new folder, the old one kept.
	rec := patchedRecord()
	rec.SeriesHash = "h1:DS3GmC3G16rAoKANThN81bogTPqtTlfsOGuVzak0GS4="
	if err := provenance.Write(tree, rec); err != nil {
		t.Fatal(err)
	}
	changed, err := Ensure(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !changed.Built || changed.Dir == first.Dir {
		t.Errorf("after a series change: built=%v dir=%s, want a new build beside %s", changed.Built, changed.Dir, first.Dir)
	}
}

// TestEnsurePristineStamp: a pristine tree's binaries carry upstream's
// version and no series, as `holdfast build --pristine` stamps them, and
// land in a -pristine folder.
func TestEnsurePristineStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program")
	}
	tree := fakeTree(t, provenance.Record{Kind: provenance.Pristine, Upstream: "fake", Module: fakeModule, Version: "v1.2.3"})
	res, err := Ensure(context.Background(), Request{Root: t.TempDir(), Tree: tree, Upstream: fakeUpstream, Packages: []string{"./cmd/a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := run(t, res.Paths["a"]), "a v1.2.3 holdfast:unknown,series:unknown 1970-01-01T00:00:00Z"; got != want {
		t.Errorf("a printed %q, want %q", got, want)
	}
	if !strings.Contains(filepath.Base(res.Dir), "-pristine-") {
		t.Errorf("cache folder %s does not say pristine", res.Dir)
	}
}

func TestEnsureRejects(t *testing.T) {
	ctx := context.Background()
	tree := fakeTree(t, patchedRecord())
	other := *fakeUpstream
	other.Name, other.Module = "karmada", "github.com/karmada-io/karmada"
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"no packages", Request{Root: t.TempDir(), Tree: tree, Upstream: fakeUpstream}, "no packages"},
		{"absolute package", Request{Root: t.TempDir(), Tree: tree, Upstream: fakeUpstream, Packages: []string{"example.com/fake/cmd/a"}}, "relative to the module root"},
		{"bad binary name", Request{Root: t.TempDir(), Tree: tree, Upstream: fakeUpstream, Packages: []string{"./cmd/a=../a"}}, "not a plain file name"},
		{"same binary twice", Request{Root: t.TempDir(), Tree: tree, Upstream: fakeUpstream, Packages: []string{"./cmd/a", "./cmd/b=a"}}, "two packages build binary a"},
		{"no provenance", Request{Root: t.TempDir(), Tree: t.TempDir(), Upstream: fakeUpstream, Packages: []string{"./cmd/a"}}, "apply it first"},
		{"another upstream's tree", Request{Root: t.TempDir(), Tree: tree, Upstream: &other, Packages: []string{"./cmd/a"}}, "not karmada"},
		{"no upstream", Request{Root: t.TempDir(), Tree: tree, Packages: []string{"./cmd/a"}}, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Ensure(ctx, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestEnsureFailedBuildLeavesNothing: a package that does not compile
// leaves no cache folder that a later call would take for complete.
func TestEnsureFailedBuildLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	tree := fakeTree(t, patchedRecord())
	if err := os.WriteFile(filepath.Join(tree, "cmd/b/main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	_, err := Ensure(context.Background(), Request{Root: root, Tree: tree, Upstream: fakeUpstream, Packages: []string{"./cmd/a", "./cmd/b"}})
	if err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Fatalf("got %v, want the compiler's error", err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, CacheDir))
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("a failed build left %s in the cache", e.Name())
		}
	}
}

func TestKeySeparatesInputs(t *testing.T) {
	base := key([]byte("p"), []string{"./cmd/a"}, []string{"a"}, "-X v=1", "go1.26")
	for name, k := range map[string]string{
		"provenance": key([]byte("q"), []string{"./cmd/a"}, []string{"a"}, "-X v=1", "go1.26"),
		"package":    key([]byte("p"), []string{"./cmd/b"}, []string{"a"}, "-X v=1", "go1.26"),
		"name":       key([]byte("p"), []string{"./cmd/a"}, []string{"b"}, "-X v=1", "go1.26"),
		"ldflags":    key([]byte("p"), []string{"./cmd/a"}, []string{"a"}, "-X v=2", "go1.26"),
		"go":         key([]byte("p"), []string{"./cmd/a"}, []string{"a"}, "-X v=1", "go1.27"),
	} {
		if k == base {
			t.Errorf("changing the %s kept key %s", name, k)
		}
	}
	if again := key([]byte("p"), []string{"./cmd/a"}, []string{"a"}, "-X v=1", "go1.26"); again != base {
		t.Errorf("same inputs gave %s then %s", base, again)
	}
	if len(base) != 16 {
		t.Errorf("key %q is not 16 hex digits", base)
	}
}
