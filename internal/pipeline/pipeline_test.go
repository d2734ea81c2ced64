package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil
}

func TestBuildTrees(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	ctx := context.Background()

	patched, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatalf("Build patched: %v", err)
	}
	pristineTree, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Pristine)
	if err != nil {
		t.Fatalf("Build pristine: %v", err)
	}
	if got, want := filepath.Base(patched.Dir), "up-v1.2.0"; got != want {
		t.Errorf("patched tree %s, want %s", got, want)
	}
	if got, want := filepath.Base(pristineTree.Dir), "up-v1.2.0-pristine"; got != want {
		t.Errorf("pristine tree %s, want %s", got, want)
	}

	tests := []struct {
		file           string
		inPatched      string // substring, or "" for absent
		inPristine     string
		absentPristine bool
	}{
		{file: "pkg/util/client.go", inPatched: "return refreshed()", inPristine: `return "frozen"`},
		{file: "pkg/util/glue.go", inPatched: `"example.com/up/third_party/holdfast/lib"`, absentPristine: true},
		{file: "third_party/holdfast/lib/lib.go", inPatched: "func Fresh()", absentPristine: true},
		{file: "third_party/holdfast/lib/lib_test.go", inPatched: `"example.com/up/third_party/holdfast/lib"`, absentPristine: true},
		{file: "pkg/util/regression_test.go", inPatched: "TestTokenIsFresh", inPristine: "TestTokenIsFresh"},
		{file: provenance.FileName, inPatched: "holdfast-version: v1.2.0-holdfast.3", inPristine: "kind: pristine"},
	}
	for _, tt := range tests {
		if got := read(t, patched.Dir, tt.file); !strings.Contains(got, tt.inPatched) {
			t.Errorf("patched %s lacks %q:\n%s", tt.file, tt.inPatched, got)
		}
		if tt.absentPristine {
			if exists(pristineTree.Dir, tt.file) {
				t.Errorf("pristine tree has %s", tt.file)
			}
		} else if got := read(t, pristineTree.Dir, tt.file); !strings.Contains(got, tt.inPristine) {
			t.Errorf("pristine %s lacks %q:\n%s", tt.file, tt.inPristine, got)
		}
	}
	rec, err := provenance.Read(patched.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Sum != fx.Sums["v1.2.0"] || rec.Series != "patches/up/1.2" || strings.Join(rec.Patches, ",") != "0001-fresh-token.patch" || !strings.HasPrefix(rec.SeriesHash, "h1:") {
		t.Errorf("provenance = %+v", rec)
	}

	// The regression test shows RED on pristine and GREEN on patched, and
	// the carried library's own test passes inside the upstream module.
	goTest := func(dir string) (string, error) {
		cmd := exec.Command("go", "test", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), fx.Env()...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := goTest(patched.Dir); err != nil {
		t.Errorf("go test in the patched tree: %v\n%s", err, out)
	}
	if out, err := goTest(pristineTree.Dir); err == nil || !strings.Contains(out, "the token is frozen") {
		t.Errorf("go test in the pristine tree should fail on the frozen token: %v\n%s", err, out)
	}
}

func TestBuildIsIdempotent(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	ctx := context.Background()
	first, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Pristine); err != nil {
		t.Fatal(err)
	}
	again, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Outcome.Reused || again.Outcome.TreeHash != first.Outcome.TreeHash {
		t.Errorf("second run: %+v, want the first tree (%s) reused", again.Outcome, first.Outcome.TreeHash)
	}

	// Any input change rebuilds: here the overlay.
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"overlay/up/pkg/util/glue.go": "package util\n\nimport \"example.com/up/third_party/holdfast/lib\"\n\n// refreshed asks the library.\nfunc refreshed() string { return lib.Fresh() }\n"})
	changed, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Outcome.Reused || changed.Outcome.Reason != "inputs changed" || changed.Record.SeriesHash == first.Record.SeriesHash {
		t.Errorf("after an overlay change: %+v (series hash %s, was %s)", changed.Outcome, changed.Record.SeriesHash, first.Record.SeriesHash)
	}
	// The pristine twin does not depend on the overlay: it stays.
	pristineAgain, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Pristine)
	if err != nil {
		t.Fatal(err)
	}
	if !pristineAgain.Outcome.Reused {
		t.Errorf("pristine tree rebuilt after an overlay change: %+v", pristineAgain.Outcome)
	}
	// A rebuild with the same inputs elsewhere gives the same content.
	fx.Config.Out = t.TempDir()
	elsewhere, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if elsewhere.Outcome.TreeHash != changed.Outcome.TreeHash {
		t.Errorf("same inputs, different trees: %s vs %s", elsewhere.Outcome.TreeHash, changed.Outcome.TreeHash)
	}
}

func TestBuildFailures(t *testing.T) {
	needGo(t)
	tests := []struct {
		name    string
		breakIt func(t *testing.T, fx *pipelinetest.Fixture)
		want    []string
	}{
		{
			name: "conflicting patch names patch, file, hunk and line",
			breakIt: func(t *testing.T, fx *pipelinetest.Fixture) {
				pipelinetest.Write(t, fx.Config.Root, map[string]string{
					"patches/up/1.2/0001-fresh-token.patch": strings.Replace(pipelinetest.Patch, " // Token returns the credential", " // Token gives the credential", 1),
				})
			},
			want: []string{"patches/up/1.2/0001-fresh-token.patch: pkg/util/client.go: hunk #1 (@@ -2,5 +2,5 @@) does not apply: expected line 3 to be \"// Token gives the credential used for requests.\", found \"// Token returns the credential used for requests.\""},
		},
		{
			name: "missing header field",
			breakIt: func(t *testing.T, fx *pipelinetest.Fixture) {
				pipelinetest.Write(t, fx.Config.Root, map[string]string{
					"patches/up/1.2/0001-fresh-token.patch": strings.Replace(pipelinetest.Patch, "Drop-When: rebased onto v1.4.0\n", "", 1),
				})
			},
			want: []string{"0001-fresh-token.patch: header field Drop-When is missing or empty"},
		},
		{
			name: "tampered module cache",
			breakIt: func(t *testing.T, fx *pipelinetest.Fixture) {
				m, err := fx.Config.Download.Download(context.Background(), pipelinetest.Module, "v1.2.0")
				if err != nil {
					t.Fatal(err)
				}
				pipelinetest.Write(t, m.Dir, map[string]string{"pkg/util/client.go": strings.Replace(pipelinetest.ClientGo, "frozen", "fresh", 1)})
			},
			want: []string{"up v1.2.0 (patched): example.com/up@v1.2.0: the extracted source in", "module cache was modified"},
		},
		{
			name: "overlay replacing an upstream file",
			breakIt: func(t *testing.T, fx *pipelinetest.Fixture) {
				pipelinetest.Write(t, fx.Config.Root, map[string]string{"overlay/up/pkg/util/client.go": "package util\n"})
			},
			want: []string{"an upstream file is changed by a patch"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := pipelinetest.New(t)
			tt.breakIt(t, fx)
			_, err := fx.Config.Build(context.Background(), fx.Upstream, fx.Pin, provenance.Patched)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			// Nothing that looks finished (or half-finished) is left.
			entries, _ := os.ReadDir(fx.Config.Out)
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".lock") {
					t.Errorf("left in %s: %s", fx.Config.Out, e.Name())
				}
			}
		})
	}
}

// A failed rebuild keeps the previous finished tree.
func TestFailedRebuildKeepsTree(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	ctx := context.Background()
	first, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"patches/up/1.2/0002-broken.patch": strings.Replace(pipelinetest.Patch, "return refreshed()", "return refreshed() // again", 1),
	})
	if _, err := fx.Config.Build(ctx, fx.Upstream, fx.Pin, provenance.Patched); err == nil || !strings.Contains(err.Error(), "0002-broken.patch: pkg/util/client.go: hunk #1") {
		t.Fatalf("err = %v", err)
	}
	if got := read(t, first.Dir, "pkg/util/client.go"); !strings.Contains(got, "return refreshed()") {
		t.Errorf("the previous tree was damaged:\n%s", got)
	}
}

func TestLogNamesEachStep(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	var log bytes.Buffer
	fx.Config.Log = &log
	if _, err := fx.Config.Build(context.Background(), fx.Upstream, fx.Pin, provenance.Patched); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verified example.com/up@v1.2.0 h1:", "carried [lib]", "laid 1 overlay files from overlay/up", "laid 1 test files from tests/up", "applied 0001-fresh-token.patch (pkg/util/client.go: 1 hunk)", "built: no tree yet"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestBuildAppliesOverrides: the series' overrides file raises a
// requirement of the patched tree with the go command (checksum database
// consulted), the provenance records it, the pristine twin keeps
// upstream's, and the file is an input of the series hash.
func TestBuildAppliesOverrides(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	ctx := context.Background()
	fx.Proxy.Add(t, "example.com/dep", "v1.0.0", map[string]string{"dep.go": "package dep\n"})
	fx.Proxy.Add(t, "example.com/dep", "v1.0.1", map[string]string{"dep.go": "package dep\n"})
	sum := fx.Proxy.Add(t, pipelinetest.Module, "v1.5.0", map[string]string{
		"go.mod":             "module " + pipelinetest.Module + "\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n",
		"pkg/util/client.go": pipelinetest.ClientGo,
		"pkg/util/dep.go":    "package util\n\nimport _ \"example.com/dep\"\n",
	})
	pin := fx.Pin
	pin.Version, pin.Sum, pin.Series, pin.Default = "v1.5.0", sum, "patches/up/1.5", false
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"patches/up/1.5/overrides": `example.com/dep v1.0.1
	fixes GO-2099-0001 CVE-2099-0001
	drop-when upstream requires >= v1.0.1
	why the patch release with the fix
`})
	before, err := fx.Config.LoadInputs(fx.Upstream, "patches/up/1.2")
	if err != nil {
		t.Fatal(err)
	}
	in, err := fx.Config.LoadInputs(fx.Upstream, pin.Series)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Overrides) != 1 || in.SeriesHash == before.SeriesHash {
		t.Errorf("inputs of the series with overrides: %d entries, hash %s (without: %s)", len(in.Overrides), in.SeriesHash, before.SeriesHash)
	}

	patched, err := fx.Config.Build(ctx, fx.Upstream, pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, patched.Dir, "go.mod"); !strings.Contains(got, "example.com/dep v1.0.1") {
		t.Errorf("patched go.mod does not require dep v1.0.1:\n%s", got)
	}
	want := []string{"example.com/dep v1.0.0 => v1.0.1 (fixes GO-2099-0001 CVE-2099-0001)"}
	if rec, err := provenance.Read(patched.Dir); err != nil || strings.Join(rec.Overrides, "\n") != strings.Join(want, "\n") {
		t.Errorf("provenance overrides %q (%v), want %q", rec.Overrides, err, want)
	}
	// A tree already up to date reports what it was built with: holdfast
	// test picks the override importers from this record, and make patch
	// has always built the tree before it runs.
	again, err := fx.Config.Build(ctx, fx.Upstream, pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Outcome.Reused || strings.Join(again.Record.Overrides, "\n") != strings.Join(want, "\n") {
		t.Errorf("rebuild reused %v, record overrides %q, want %q", again.Outcome.Reused, again.Record.Overrides, want)
	}
	// The pristine twin builds upstream's code on the patched tree's
	// dependency versions; the released tree keeps upstream's own.
	pristineTree, err := fx.Config.Build(ctx, fx.Upstream, pin, provenance.Pristine)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, pristineTree.Dir, "go.mod"), read(t, patched.Dir, "go.mod"); got != want {
		t.Errorf("pristine go.mod differs from the patched tree's:\n%s\nwant:\n%s", got, want)
	}
	if got, want := read(t, pristineTree.Dir, "go.sum"), read(t, patched.Dir, "go.sum"); got != want {
		t.Errorf("pristine go.sum differs from the patched tree's:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(pristineTree.Record.Overrides, "\n") != strings.Join(want, "\n") || len(pristineTree.Record.Patches) != 0 {
		t.Errorf("pristine provenance: overrides %q, patches %q; want the overrides only", pristineTree.Record.Overrides, pristineTree.Record.Patches)
	}
	released, err := fx.Config.Build(ctx, fx.Upstream, pin, provenance.Released)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, released.Dir, "go.mod"); !strings.Contains(got, "example.com/dep v1.0.0") {
		t.Errorf("released go.mod changed:\n%s", got)
	}
	if len(released.Record.Overrides) != 0 || released.Record.Kind != provenance.Released {
		t.Errorf("released provenance: kind %s, overrides %q; want released, none", released.Record.Kind, released.Record.Overrides)
	}
	vet := exec.Command("go", "build", "./...")
	vet.Dir, vet.Env = patched.Dir, append(append(os.Environ(), fx.Env()...), "GOFLAGS=-mod=readonly", "GOSUMDB="+fx.Proxy.ChecksumDB())
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("the patched tree does not build with its go.mod and go.sum: %v\n%s", err, out)
	}
}
