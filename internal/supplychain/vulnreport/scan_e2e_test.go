//go:build e2e

package vulnreport

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// These tests run the real govulncheck against the real database of the
// pinned snapshot, on small binaries built here: they build both tools into
// .cache/tools and the database into .cache/vulndb on the first run (about
// a minute on a cold Go build cache), so they are e2e-tagged and run with
// `make e2e` (E2E_PKGS).

var real struct {
	once    sync.Once
	root    string
	scanner Scanner
	err     error
}

func realScanner(t *testing.T) (string, Scanner) {
	t.Helper()
	real.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		if real.root, real.err = toolcache.Root(); real.err != nil {
			return
		}
		start := time.Now()
		gvc, err := toolcache.Ensure(ctx, real.root, toolcache.Govulncheck)
		if err != nil {
			real.err = err
			return
		}
		db, err := DB(ctx, real.root)
		if err != nil {
			real.err = err
			return
		}
		real.scanner = Scanner{Govulncheck: gvc, DB: db}
		t.Logf("govulncheck and the database ready in %s", time.Since(start).Round(time.Millisecond))
	})
	if real.err != nil {
		t.Fatal(real.err)
	}
	return real.root, real.scanner
}

// buildProgram builds a main package of module modPath (requiring
// requires, "path version" each) from main.go, with -ldflags ldflags.
func buildProgram(t *testing.T, modPath, mainGo, ldflags string, requires ...string) string {
	t.Helper()
	dir := t.TempDir()
	goMod := "module " + modPath + "\n\ngo 1.24\n"
	for _, r := range requires {
		goMod += "\nrequire " + r + "\n"
	}
	writeFile(t, filepath.Join(dir, "go.mod"), goMod, 0o644)
	writeFile(t, filepath.Join(dir, "main.go"), mainGo, 0o644)
	out := filepath.Join(dir, "bin", filepath.Base(modPath))
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-trimpath", "-ldflags", ldflags, "-o", out, "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "CGO_ENABLED=0")
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", args[0], err, output)
		}
	}
	return out
}

// vulnerableProbe calls the functions GO-2020-0015 names in
// golang.org/x/text v0.3.0 (a UTF-16 decoder through transform.String),
// fixed in v0.3.3.
func vulnerableProbe(t *testing.T, ldflags string) string {
	return buildProgram(t, "example.test/vulnprobe", `package main

import (
	"fmt"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

func main() {
	s, _, err := transform.String(unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder(), "\xfe\xff\x00a")
	fmt.Println(s, err)
}
`, ldflags, "golang.org/x/text v0.3.0")
}

func TestScanFindsACalledVulnerableFunction(t *testing.T) {
	_, s := realScanner(t)
	probe := vulnerableProbe(t, "")
	start := time.Now()
	r, err := s.Scan(context.Background(), []Binary{{Path: probe}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scan took %s", time.Since(start).Round(time.Millisecond))
	if r.Scanner != "govulncheck v1.9.0" || r.DB.Version != VulnDBVersion || r.DB.Entries < 4000 {
		t.Errorf("scanner %q, database %+v", r.Scanner, r.DB)
	}
	b := r.Binaries[0]
	if b.Level != "symbol" || b.Name != "vulnprobe" {
		t.Errorf("binary %s at %s level, want vulnprobe at symbol level", b.Name, b.Level)
	}
	f := findingOf(b.Findings, "GO-2020-0015", "golang.org/x/text")
	if f == nil {
		t.Fatalf("GO-2020-0015 not found in %+v", b.Findings)
	}
	if f.Reach != Reachable || f.Version != "v0.3.0" || f.Fixed != "v0.3.3" || !strings.Contains(f.Summary, "Infinite loop") {
		t.Errorf("GO-2020-0015 = %+v, want reachable, v0.3.0, fixed in v0.3.3", f)
	}
	if !slices.Contains(f.Symbols, "golang.org/x/text/transform.String") {
		t.Errorf("symbols %q lack transform.String, which main calls", f.Symbols)
	}
	// The language package is not linked in: its advisory is about the
	// module only.
	if g := findingOf(b.Findings, "GO-2021-0113", "golang.org/x/text"); g == nil || g.Reach != Required {
		t.Errorf("GO-2021-0113 = %+v, want required only", g)
	}
	if md := r.Markdown(); !strings.Contains(md, "| golang.org/x/text | v0.3.0 | v0.3.3 | GO-2020-0015 |  | vulnprobe |") {
		t.Errorf("notes do not name GO-2020-0015:\n%s", md)
	}

	// Written, it reads back, and govulncheck itself reads it again.
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FolderName, "vulnprobe.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := decode(t, data)
	if st.config.DB != r.DB.String() || st.config.ScannerVersion != "v1.9.0" {
		t.Errorf("written stream's config %+v", st.config)
	}
	cmd := exec.Command(s.Govulncheck, "-mode=convert")
	cmd.Stdin = bytes.NewReader(data)
	text, err := cmd.CombinedOutput()
	// Exit status 3 is govulncheck's text mode saying it found something.
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(text), "GO-2020-0015") || !strings.Contains(string(text), "transform.String") {
		t.Errorf("govulncheck -mode=convert on the written stream: exit %d (%v), want 3\n%s", code, err, text)
	}

	// The same binary and snapshot give the same bytes.
	again, err := s.Scan(context.Background(), []Binary{{Path: probe}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Binaries[0].stream, b.stream) || again.Summary() != r.Summary() {
		t.Error("a second scan of the same binary gave other bytes")
	}
}

// Linked with -s -w the binary has no symbol table, and govulncheck then
// reports every known vulnerable function as present: the report must say
// unknown, for each advisory, and name them all.
func TestScanStrippedBinaryIsModuleLevel(t *testing.T) {
	_, s := realScanner(t)
	r, err := s.Scan(context.Background(), []Binary{{Path: vulnerableProbe(t, "-s -w")}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Binaries[0]
	if b.Level != "module" {
		t.Errorf("level %s, want module", b.Level)
	}
	if c := b.Counts(); c.Reachable != 0 || c.Other != 0 || c.Unknown == 0 {
		t.Errorf("counts %+v, want every advisory unknown", c)
	}
	for _, id := range []string{"GO-2020-0015", "GO-2021-0113"} {
		if f := findingOf(b.Findings, id, "golang.org/x/text"); f == nil || f.Reach != Unknown {
			t.Errorf("%s = %+v, want named, of unknown reach", id, f)
		}
	}
}

func TestScanBinaryWithoutVulnerableDependencies(t *testing.T) {
	_, s := realScanner(t)
	hello := buildProgram(t, "example.test/clean", "package main\n\nfunc main() { println(\"hello\") }\n", "")
	r, err := s.Scan(context.Background(), []Binary{{Path: hello}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Binaries[0]
	if c := b.Counts(); c.Reachable != 0 || c.Unknown != 0 {
		t.Errorf("counts %+v, want nothing reachable: %+v", c, b.Findings)
	}
	for _, f := range b.Findings {
		if f.Module != stdlib {
			t.Errorf("finding in %s, a module the program does not have: %+v", f.Module, f)
		}
	}
}

// A binary built in a checked-out tree says (devel) for its main module;
// given the version it was built from, the main module's own advisories are
// looked up (GO-2024-2817 affects every Karmada release), otherwise the
// report says they were not.
func TestScanLooksUpADevelMainModule(t *testing.T) {
	_, s := realScanner(t)
	bin := buildProgram(t, "github.com/karmada-io/karmada", "package main\n\nfunc main() {}\n", "")
	r, err := s.Scan(context.Background(), []Binary{{Path: bin, MainVersion: "v1.18.2"}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Binaries[0]
	f := findingOf(b.Findings, "GO-2024-2817", "github.com/karmada-io/karmada")
	if f == nil || f.Reach != Unknown || f.Version != "v1.18.2" || f.Fixed != "" || !strings.Contains(f.Note, "(devel)") {
		t.Errorf("GO-2024-2817 = %+v, want of unknown reach at v1.18.2, no fix, with a note", f)
	}
	if b.MainVersion != "(devel)" || b.CheckedMainVersion != "v1.18.2" || b.mainStream == nil {
		t.Errorf("main %s, checked at %q, query stream %d bytes", b.MainVersion, b.CheckedMainVersion, len(b.mainStream))
	}
	// Fixed in v1.12.0: not an advisory of v1.18.2.
	if g := findingOf(b.Findings, "GO-2025-3364", "github.com/karmada-io/karmada"); g != nil {
		t.Errorf("GO-2025-3364, fixed in v1.12.0, reported for v1.18.2: %+v", g)
	}

	r, err = s.Scan(context.Background(), []Binary{{Path: bin}})
	if err != nil {
		t.Fatal(err)
	}
	b = r.Binaries[0]
	if findingOf(b.Findings, "GO-2024-2817", "github.com/karmada-io/karmada") != nil || b.CheckedMainVersion != "" {
		t.Errorf("without a version: %+v", b)
	}
	if !strings.Contains(r.Summary(), "its own advisories were **not** looked up") {
		t.Errorf("the summary does not say the main module was not looked up:\n%s", r.Summary())
	}
}

// A binary holdfast builds records its main module at a pseudo-version
// after the upstream tag (internal/pipeline/build), which govulncheck's binary
// mode matches by itself: Karmada's own advisory is found with no version given
// and no query, and one fixed before the tag is not reported.
func TestScanBinaryModeMatchesAStampedMainModule(t *testing.T) {
	_, s := realScanner(t)
	tree := t.TempDir()
	writeFile(t, filepath.Join(tree, "go.mod"), "module github.com/karmada-io/karmada\n\ngo 1.24\n", 0o644)
	writeFile(t, filepath.Join(tree, "main.go"), "package main\n\nfunc main() {}\n", 0o644)
	up := &pins.Upstream{Name: "karmada", Module: "github.com/karmada-io/karmada", Build: []string{"."}}
	bins, err := build.Build(context.Background(), build.Options{
		Tree: tree, Upstream: up, Pin: pins.Pin{Version: "v1.18.2", Revision: 1}, Out: t.TempDir(),
		Stamp: build.Stamp{Version: "v1.18.2-holdfast.1", Source: build.Source{Commit: "abc", Date: time.Unix(1764672000, 0)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Scan(context.Background(), []Binary{{Path: bins[0].Path}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Binaries[0]
	if !strings.HasPrefix(b.MainVersion, "v1.18.3-0.") || b.CheckedMainVersion != b.MainVersion || b.mainStream != nil {
		t.Errorf("main %s, checked at %q, query stream %d bytes: want a pseudo-version after v1.18.2, checked by binary mode, no query", b.MainVersion, b.CheckedMainVersion, len(b.mainStream))
	}
	f := findingOf(b.Findings, "GO-2024-2817", "github.com/karmada-io/karmada")
	if f == nil || f.Version != b.MainVersion || strings.Contains(f.Note, "(devel)") {
		t.Errorf("GO-2024-2817 = %+v, want found by binary mode at %s", f, b.MainVersion)
	}
	if g := findingOf(b.Findings, "GO-2025-3364", "github.com/karmada-io/karmada"); g != nil {
		t.Errorf("GO-2025-3364, fixed in v1.12.0, reported for a build of v1.18.2: %+v", g)
	}
}

// Bad input is named, before any tool is built, and nothing is written.
func TestWriteReportRefusesBadBinaries(t *testing.T) {
	root, _ := realScanner(t)
	probe := vulnerableProbe(t, "")
	data, err := os.ReadFile(probe)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := writeFile(t, filepath.Join(dir, "truncated"), string(data[:4096]), 0o755)
	for _, tc := range []struct {
		name string
		bins []Binary
		want string
	}{
		{"missing", []Binary{{Path: probe}, {Path: filepath.Join(dir, "absent")}}, filepath.Join(dir, "absent") + ": no such file"},
		{"truncated", []Binary{{Path: probe}, {Path: truncated}}, truncated + ": not a Go binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := WriteReport(context.Background(), root, out, tc.bins)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if got := listDir(t, out); len(got) != 0 {
				t.Errorf("a refused report left %q", got)
			}
		})
	}
}

// The pinned snapshot, downloaded and indexed by the real cmd/indexdb into
// a fresh cache, is built once and then reused.
func TestDBBuildsOnceFromThePinnedSnapshot(t *testing.T) {
	root, shared := realScanner(t)
	if shared.DB.Dir != filepath.Join(root, DBCacheDir, VulnDBVersion) {
		t.Errorf("DB(root) is at %s", shared.DB.Dir)
	}
	ctx := context.Background()
	index := func(ctx context.Context, osvDir, out string) error {
		tool, err := toolcache.Ensure(ctx, root, toolcache.VulnDBIndex)
		if err != nil {
			return err
		}
		return runIndexer(ctx, tool, osvDir, out)
	}
	cache := t.TempDir()
	builds := dbBuilds.Load()
	start := time.Now()
	db, err := buildDB(ctx, cache, pinned, pristine.Downloader{}, index)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("download, verification and indexing took %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	again, err := buildDB(ctx, cache, pinned, pristine.Downloader{}, index)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reuse took %s", time.Since(start).Round(time.Millisecond))
	if n := dbBuilds.Load() - builds; n != 1 || again != db {
		t.Errorf("%d builds for two calls, want 1; %+v then %+v", n, db, again)
	}
	if db.Entries != 4789 || !db.LastModified.IsZero() || db.Committed.Format(time.RFC3339) != "2026-11-05T23:49:57Z" {
		t.Errorf("database %+v: want 4789 advisories, an unset db.json date, committed 2026-11-05T23:49:57Z", db)
	}
	for _, f := range []string{"index/db.json", "index/modules.json", "index/vulns.json", "ID/GO-2020-0015.json", sourceFile} {
		if _, err := os.Stat(filepath.Join(db.Dir, f)); err != nil {
			t.Errorf("database lacks %s: %v", f, err)
		}
	}
	if got := listDir(t, cache); !slices.Equal(got, []string{VulnDBVersion}) {
		t.Errorf("cache holds %q", got)
	}
}

// The side-by-side table on real scans: the same program at x/text v0.3.0
// (pristine) and at v0.3.3 (an override to GO-2020-0015's fixed version).
// The override removes GO-2020-0015 and nothing it does not fix.
func TestCompareRealScansOfAnOverride(t *testing.T) {
	_, s := realScanner(t)
	mainGo := `package main

import (
	"fmt"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

func main() {
	s, _, err := transform.String(unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder(), "\xfe\xff\x00a")
	fmt.Println(s, err)
}
`
	pristine, err := s.Scan(context.Background(), []Binary{{Path: buildProgram(t, "example.test/vulnprobe", mainGo, "", "golang.org/x/text v0.3.0")}})
	if err != nil {
		t.Fatal(err)
	}
	holdfast, err := s.Scan(context.Background(), []Binary{{Path: buildProgram(t, "example.test/vulnprobe", mainGo, "", "golang.org/x/text v0.3.3")}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Compare(pristine, holdfast)
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if c.Pristine.Reachable != c.Holdfast.Reachable+1 {
		t.Errorf("reachable: pristine %d, holdfast %d; want one fewer in holdfast", c.Pristine.Reachable, c.Holdfast.Reachable)
	}
	if len(c.Overrides) != 1 || c.Overrides[0].OSV != "GO-2020-0015" || c.Overrides[0].From != "v0.3.0" || c.Overrides[0].Fixed != "v0.3.3" {
		t.Errorf("fixed by overrides %+v, want GO-2020-0015 only (x/text v0.3.0, fixed in v0.3.3)", c.Overrides)
	}
	if len(c.Toolchain) != 0 {
		t.Errorf("fixed by the toolchain %+v, want none: both sides were built with the same Go", c.Toolchain)
	}
	md := SideBySideMarkdown(cs, "")
	if !strings.Contains(md, "- GO-2020-0015: golang.org/x/text v0.3.0, fixed in v0.3.3 (reachable upstream)") {
		t.Errorf("table lacks GO-2020-0015:\n%s", md)
	}
	t.Logf("\n%s", md)
}
