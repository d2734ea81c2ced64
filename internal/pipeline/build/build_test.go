package build_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

const seriesHash = "h1:DLGGQE4gH26vaJSej2j+HdClOtLqH7YjuQF//5JL5GY="

func stamp() build.Stamp {
	return build.Stamp{
		Version:    "v1.18.2-holdfast.1",
		SeriesHash: seriesHash,
		Source:     build.Source{Commit: "3b03d41f00", ShortCommit: "3b03d41f00", TreeState: "clean", Date: time.Unix(1764672000, 0)},
	}
}

func TestLDFlags(t *testing.T) {
	v := &pins.VersionVars{Package: "pkg/version", Vars: []pins.VersionVar{
		{Name: "gitVersion", Field: pins.FieldVersion},
		{Name: "gitCommit", Field: pins.FieldCommit},
		{Name: "gitShortCommit", Field: pins.FieldShortCommit},
		{Name: "gitTreeState", Field: pins.FieldTreeState},
		{Name: "buildDate", Field: pins.FieldBuildDate},
		{Name: "series", Field: pins.FieldSeriesHash},
	}}
	got, err := build.LDFlags("github.com/karmada-io/karmada", v, stamp())
	if err != nil {
		t.Fatal(err)
	}
	const p = "-X github.com/karmada-io/karmada/pkg/version."
	want := p + "gitVersion=v1.18.2-holdfast.1 " +
		p + "gitCommit=holdfast:3b03d41f00,series:0cb186404e20 " +
		p + "gitShortCommit=3b03d41f00 " +
		p + "gitTreeState=clean " +
		p + "buildDate=2025-12-02T10:40:00Z " +
		p + "series=0cb186404e20"
	if got != want {
		t.Errorf("LDFlags:\n got %s\nwant %s", got, want)
	}
	if got, err := build.LDFlags("m", nil, stamp()); err != nil || got != "" {
		t.Errorf("LDFlags without version vars = %q, %v", got, err)
	}
	bad := stamp()
	bad.Version = "v1 2"
	if _, err := build.LDFlags("m", v, bad); err == nil || !strings.Contains(err.Error(), "gitVersion") {
		t.Errorf("a value with a space: err = %v, want one naming the variable", err)
	}
}

func TestShortSeriesHash(t *testing.T) {
	for in, want := range map[string]string{seriesHash: "0cb186404e20", "h1:!!": "unknown", "": "unknown"} {
		if got := build.ShortSeriesHash(in); got != want {
			t.Errorf("ShortSeriesHash(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadSourceOutsideGit(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	s, err := build.ReadSource(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit != "unknown" || s.TreeState != "unknown" || !s.Date.Equal(time.Unix(0, 0)) {
		t.Errorf("outside git: %+v", s)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1764672000")
	if s, _ := build.ReadSource(context.Background(), t.TempDir()); !s.Date.Equal(time.Unix(1764672000, 0)) {
		t.Errorf("SOURCE_DATE_EPOCH ignored: %v", s.Date)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := build.ReadSource(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("bad SOURCE_DATE_EPOCH: err = %v", err)
	}
}

// TestBuild builds the synthetic upstream's binary, runs it and reads the
// stamped version back; a second build replaces the first.
func TestBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"overlay/up/pkg/version/version.go": "package version\n\nvar gitVersion, gitCommit = \"unknown\", \"unknown\"\n\n// Get is what --version prints.\nfunc Get() string { return gitVersion + \" \" + gitCommit }\n",
		"overlay/up/cmd/hello/main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/up/pkg/util\"\n\t\"example.com/up/pkg/version\"\n)\n\nfunc main() { fmt.Println(version.Get(), util.Token()) }\n",
	})
	up := *fx.Upstream
	up.Build = []string{"./cmd/hello"}
	up.Binaries = map[string]string{"./cmd/hello": "up-hello"}
	up.Version = &pins.VersionVars{Package: "pkg/version", Vars: []pins.VersionVar{{Name: "gitVersion", Field: pins.FieldVersion}, {Name: "gitCommit", Field: pins.FieldCommit}}}
	tree, err := fx.Config.Build(context.Background(), &up, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	// A relative output folder is relative to the caller, not the tree.
	t.Chdir(t.TempDir())
	out := "bin"
	o := build.Options{
		Tree: tree.Dir, Upstream: &up, Pin: fx.Pin, Out: out, Env: append(os.Environ(), fx.Env()...),
		Stamp: build.Stamp{Version: tree.Record.HoldfastVersion, SeriesHash: tree.Record.SeriesHash, Source: build.Source{Commit: "abc"}},
	}
	for range 2 {
		bins, err := build.Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if abs, _ := filepath.Abs(filepath.Join(out, "up-v1.2.0", "up-hello")); len(bins) != 1 || bins[0].Path != abs {
			t.Fatalf("binaries %+v", bins)
		}
		got, err := exec.Command(bins[0].Path).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "v1.2.0-holdfast.3 holdfast:abc,series:" + build.ShortSeriesHash(tree.Record.SeriesHash) + " fresh\n"
		if string(got) != want {
			t.Errorf("binary says %q, want %q", got, want)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("output folder holds %d entries, want only up-v1.2.0 (no partial or .old folders)", len(entries))
	}

	// The release gate recognises these binaries, and only for their pin
	// and series.
	dir := filepath.Join(out, "up-v1.2.0")
	if p, err := build.VerifyBinaries(dir, &up, fx.Pin, tree.Record.SeriesHash); err != nil || p.OS != runtime.GOOS || p.Arch != runtime.GOARCH {
		t.Errorf("VerifyBinaries = %v, %v; want %s/%s", p, err, runtime.GOOS, runtime.GOARCH)
	}
	nextRevision := fx.Pin
	nextRevision.Revision++
	if _, err := build.VerifyBinaries(dir, &up, nextRevision, tree.Record.SeriesHash); err == nil || !strings.Contains(err.Error(), "does not carry version v1.2.0-holdfast.4") {
		t.Errorf("VerifyBinaries of the next revision: err = %v", err)
	}
	if _, err := build.VerifyBinaries(dir, &up, fx.Pin, seriesHash); err == nil || !strings.Contains(err.Error(), "does not carry series 0cb186404e20") {
		t.Errorf("VerifyBinaries of another series: err = %v", err)
	}
	withOther := up
	withOther.Build = []string{"./cmd/hello", "./cmd/absent"}
	if _, err := build.VerifyBinaries(dir, &withOther, fx.Pin, tree.Record.SeriesHash); err == nil || !strings.Contains(err.Error(), "absent: not a Go binary") {
		t.Errorf("VerifyBinaries with a binary missing: err = %v", err)
	}

	// A failed build leaves the previous binaries in place.
	broken := up
	broken.Build = []string{"./cmd/missing"}
	o.Upstream = &broken
	if _, err := build.Build(context.Background(), o); err == nil || !strings.Contains(err.Error(), "building ./cmd/missing") {
		t.Fatalf("building a missing package: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "up-v1.2.0", "up-hello")); err != nil {
		t.Errorf("failed build removed the previous binary: %v", err)
	}

	// --only rebuilds the named binary in place and keeps the others.
	o.Upstream = &up
	other := filepath.Join(out, "up-v1.2.0", "up-other")
	if err := os.WriteFile(other, []byte("built earlier"), 0o755); err != nil {
		t.Fatal(err)
	}
	o.Only = []string{"up-hello"}
	if bins, err := build.Build(context.Background(), o); err != nil || len(bins) != 1 {
		t.Fatalf("--only up-hello: %v, %+v", err, bins)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a partial build removed a binary it did not build: %v", err)
	}
	o.Only = []string{"up-nope"}
	if _, err := build.Build(context.Background(), o); err == nil || !strings.Contains(err.Error(), `no binary "up-nope"`) || !strings.Contains(err.Error(), "up-hello") {
		t.Errorf("--only naming an unknown binary: err = %v, want one naming it and the known ones", err)
	}
}

// TestBuildPassesThePinsTags: a pin's build tags reach go build, as
// upstream's release build passes them (Karmada's estimator panics on its
// first gRPC request when built without kubernetes_protomessage_one_more_release).
func TestBuildPassesThePinsTags(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	fx, up, tree := taggedTree(t, map[string]string{
		"overlay/up/cmd/tagged/main.go":    "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(tagged) }\n",
		"overlay/up/cmd/tagged/with.go":    "//go:build holdfast_test_tag\n\npackage main\n\nconst tagged = \"with the tag\"\n",
		"overlay/up/cmd/tagged/without.go": "//go:build !holdfast_test_tag\n\npackage main\n\nconst tagged = \"without the tag\"\n",
	})
	for _, tc := range []struct{ tags, want string }{{"", "without the tag"}, {"holdfast_test_tag", "with the tag"}} {
		pin := fx.Pin
		pin.Tags = tc.tags
		out := filepath.Join(t.TempDir(), "bin")
		bins, err := build.Build(context.Background(), build.Options{
			Tree: tree.Dir, Upstream: up, Pin: pin, Out: out, Env: append(os.Environ(), fx.Env()...),
			Stamp: build.Stamp{Version: tree.Record.HoldfastVersion, SeriesHash: tree.Record.SeriesHash, Source: build.Source{Commit: "abc"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(bins[0].Path).Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("tags %q: the binary was built %s, want %s", tc.tags, strings.TrimSpace(string(got)), tc.want)
		}
	}
}

// TestBuildRefusesPinTagsUnlikeUpstreams: a tree whose hack/build.sh builds
// with a tag the pin lacks is not built, and the error says what to write
// (built without kubernetes_protomessage_one_more_release, the v1.18.2
// estimator panicked on its first gRPC request).
func TestBuildRefusesPinTagsUnlikeUpstreams(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	fx, up, tree := taggedTree(t, map[string]string{
		"overlay/up/cmd/tagged/main.go": "package main\n\nfunc main() {}\n",
		"overlay/up/hack/build.sh":      "#!/usr/bin/env bash\nCGO_ENABLED=0 go build \\\n  -tags holdfast_test_tag \\\n  -o x ./cmd/tagged\n",
	})
	out := filepath.Join(t.TempDir(), "bin")
	_, err := build.Build(context.Background(), build.Options{
		Tree: tree.Dir, Upstream: up, Pin: fx.Pin, Out: out, Env: append(os.Environ(), fx.Env()...),
		Stamp: build.Stamp{Version: tree.Record.HoldfastVersion, SeriesHash: tree.Record.SeriesHash, Source: build.Source{Commit: "abc"}},
	})
	if err == nil || !strings.Contains(err.Error(), "set tags=holdfast_test_tag on the pin") {
		t.Fatalf("Build with a pin lacking the tree's tag: %v, want a refusal naming tags=holdfast_test_tag", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("the refused build left %d entries in %s", len(entries), out)
	}
}

// taggedTree applies a fixture series whose overlay holds files and whose
// upstream builds ./cmd/tagged alone.
func taggedTree(t *testing.T, files map[string]string) (*pipelinetest.Fixture, *pins.Upstream, pipeline.Result) {
	t.Helper()
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, files)
	up := *fx.Upstream
	up.Build = []string{"./cmd/tagged"}
	up.Binaries = map[string]string{}
	tree, err := fx.Config.Build(context.Background(), &up, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	return fx, &up, tree
}
