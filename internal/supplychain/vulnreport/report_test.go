package vulnreport

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func testReport(t *testing.T) *Report {
	t.Helper()
	probe := probeStream(t)
	raw, err := probe.canonical("golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018")
	if err != nil {
		t.Fatal(err)
	}
	main := BinaryReport{
		Name: "probe", MainModule: "example.com/probe", MainVersion: "(devel)", CheckedMainVersion: "v1.0.0",
		GoVersion: "go1.26.8", Level: "symbol", Findings: classify(probe, true), stream: raw, mainStream: []byte("{}\n"),
	}
	main.Findings = append(main.Findings, Finding{OSV: "GO-2024-2817", Summary: "own advisory", Module: "example.com/probe", Version: "v1.0.0", Reach: Unknown, Note: "matched by version"})
	sortFindings(main.Findings)
	stripped := BinaryReport{
		Name: "stripped", MainModule: "example.com/stripped", MainVersion: "(devel)", GoVersion: "go1.26.8", Level: "module",
		Findings: classify(probe, false), stream: raw,
	}
	return &Report{
		Scanner: "govulncheck v1.9.0",
		DB: Database{Module: VulnDBModule, Version: "v0.0.0-20261105234957-e22db6528018", Sum: "h1:x=",
			Committed: time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC), Entries: 4789},
		Binaries: []BinaryReport{main, stripped},
	}
}

// The notes name the snapshot and every vulnerable module: reachable and
// unknown advisories one by one, imported and required ones by module, the
// standard library by Go release.
func TestMarkdownNamesEveryVulnerableModule(t *testing.T) {
	md := testReport(t).Markdown()
	for _, want := range []string{
		"golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018", "snapshot of 2026-11-05", "4789 advisories",
		"offline snapshot from the Go module proxy", "govulncheck v1.9.0",
		"`probe` (go1.26.8, symbol level): 2 reachable, 1 of unknown reachability, 2 in imported packages or required modules only.",
		"`stripped` (go1.26.8, module level): 0 reachable, 4 of unknown reachability, 0 in imported packages or required modules only.",
		"| example.com/probe | v1.0.0 | no fix |  | GO-2024-2817 | probe |",
		"| golang.org/x/text | v0.3.0 | v0.3.8 | GO-2020-0015 | GO-2020-0015, GO-2021-0113, GO-2022-1059 | probe, stripped |",
		"| stdlib | v1.26.8 | v1.26.9 | GO-2026-6603 | GO-2026-6603 | probe, stripped |",
		"Standard library go1.26.8: 1 advisory (GO-2026-6603), all fixed in go1.26.9; reachable: GO-2026-6603.",
		"golang.org/x/net v0.49.0 (GO-2026-6603)", "golang.org/x/text v0.3.0 (GO-2021-0113, GO-2022-1059)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("notes lack %q:\n%s", want, md)
		}
	}
}

func TestModuleRowUpgrade(t *testing.T) {
	for _, tc := range []struct {
		m    moduleRow
		want string
	}{
		{moduleRow{fixed: "v1.2.0"}, "v1.2.0"},
		{moduleRow{noFix: []string{"GO-1"}}, "no fix"},
		{moduleRow{fixed: "v1.2.0", noFix: []string{"GO-1", "GO-2"}}, "v1.2.0 (no fix for GO-1, GO-2)"},
	} {
		if got := tc.m.upgrade(); got != tc.want {
			t.Errorf("upgrade() = %q, want %q", got, tc.want)
		}
	}
}

func TestSummaryDescribesEachBinary(t *testing.T) {
	r := testReport(t)
	r.Binaries = append(r.Binaries, BinaryReport{Name: "clean", MainModule: "example.com/clean", MainVersion: "(devel)", GoVersion: "go1.26.8", Level: "symbol"})
	s := r.Summary()
	for _, want := range []string{
		"| snapshot commit time | 2026-11-05T23:49:57Z |",
		"| index/db.json last modified | 0001-01-01T00:00:00Z (unset:",
		"nothing was fetched from vuln.go.dev",
		"## probe", "its own advisories looked up at v1.0.0, the version it was built from",
		"## stripped", "govulncheck reached the module level (no symbol table", "its own advisories were **not** looked up",
		"golang.org/x/text/encoding/unicode.utf16Decoder.Transform, golang.org/x/text/transform.String",
		"## clean", "No known vulnerability.",
		"govulncheck -mode=convert",
		`HTTP/2 server memory exhaustion \| Trailer`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("SUMMARY.md lacks %q:\n%s", want, s)
		}
	}
	if r.Summary() != s || r.Markdown() != r.Markdown() {
		t.Error("the summary is not the same twice")
	}
}

func TestWhereShortensLongSymbolLists(t *testing.T) {
	f := Finding{Symbols: []string{"a", "b", "c", "d", "e"}}
	if got := where(f); got != "a, b, c and 2 more" {
		t.Errorf("where = %q", got)
	}
	if got := where(Finding{Packages: []string{"p"}}); got != "packages p" {
		t.Errorf("where = %q", got)
	}
	if got := where(Finding{}); got != "module only" {
		t.Errorf("where = %q", got)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplacesTheFolderWhole(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, FolderName, "gone.json")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := testReport(t)
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{FolderName}) {
		t.Errorf("%s holds %q, want only %s (no staging or old folder left)", dir, got, FolderName)
	}
	got := listDir(t, filepath.Join(dir, FolderName))
	want := []string{SummaryFile, "probe.json", "probe.main-module.json", "stripped.json"}
	if !slices.Equal(got, want) {
		t.Errorf("report files %q, want %q", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, FolderName, "probe.json"))
	if err != nil || string(data) != string(r.Binaries[0].stream) {
		t.Errorf("probe.json is not the binary's stream (%v)", err)
	}
	summary, _ := os.ReadFile(filepath.Join(dir, FolderName, SummaryFile))
	if string(summary) != r.Summary() {
		t.Error("SUMMARY.md is not Report.Summary()")
	}
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if err := testReport(t).Write(dir); err == nil || !strings.Contains(err.Error(), "writing the vulnerability report") {
		t.Fatalf("Write into a missing folder: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Write created %s (stat: %v)", dir, err)
	}
	// A report not made by a scan has no streams to write.
	dir = t.TempDir()
	r := testReport(t)
	r.Binaries[1].stream = nil
	if err := r.Write(dir); err == nil || !strings.Contains(err.Error(), "stripped has no govulncheck output") {
		t.Fatalf("Write without a stream: %v", err)
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("a failed Write left %q", got)
	}
}
