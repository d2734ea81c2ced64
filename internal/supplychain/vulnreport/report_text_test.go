package vulnreport

import (
	"encoding/json"
	"strings"
	"testing"
)

// A report without findings names no empty table and no empty list.
func TestMarkdownWithoutFindingsHasNoEmptySections(t *testing.T) {
	r := &Report{Scanner: "govulncheck v1.9.0", Binaries: []BinaryReport{{Name: "a", GoVersion: "go1.26.8", Level: "symbol"}}}
	md := r.Markdown()
	for _, unwanted := range []string{"| module | version |", "Imported or required only"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("Markdown without findings contains %q:\n%s", unwanted, md)
		}
	}
}

// Two versions of one module are two rows, each with its own advisories.
func TestAffectedModulesKeepVersionsApart(t *testing.T) {
	const net = "golang.org/x/net"
	r := &Report{Binaries: []BinaryReport{
		{Name: "a", Findings: []Finding{{OSV: "GO-2026-0001", Module: net, Version: "v0.48.0", Fixed: "v0.50.0", Reach: Reachable}}},
		{Name: "b", Findings: []Finding{{OSV: "GO-2026-0002", Module: net, Version: "v0.49.0", Fixed: "v0.51.0", Reach: Reachable}}},
	}}
	mods := r.affectedModules()
	if len(mods) != 2 || mods[0].version != "v0.48.0" || mods[0].fixed != "v0.50.0" || mods[1].version != "v0.49.0" || mods[1].fixed != "v0.51.0" {
		t.Errorf("affected modules %+v, want v0.48.0 (fixed v0.50.0) and v0.49.0 (fixed v0.51.0) apart", mods)
	}
}

func TestStdlibLines(t *testing.T) {
	r := &Report{Binaries: []BinaryReport{
		{Name: "a", GoVersion: "go1.26.8", Findings: []Finding{
			{OSV: "GO-2026-0001", Module: stdlib, Fixed: "v1.26.9", Reach: Imported},
		}},
		{Name: "b", GoVersion: "go1.25.1", Findings: []Finding{
			{OSV: "GO-2026-0002", Module: stdlib, Fixed: "", Reach: Reachable},
			{OSV: "GO-2026-0003", Module: stdlib, Fixed: "v1.25.9", Reach: Imported},
		}},
	}}
	got := r.stdlibLines()
	want := []string{
		"Standard library go1.25.1: 2 advisories (GO-2026-0002, GO-2026-0003), no Go release fixes them all yet; reachable: GO-2026-0002.",
		"Standard library go1.26.8: 1 advisory (GO-2026-0001), all fixed in go1.26.9.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdlib lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A binary without findings does not end the summary: the next one follows.
func TestSummaryGoesOnAfterACleanBinary(t *testing.T) {
	r := &Report{Binaries: []BinaryReport{
		{Name: "clean", Level: "symbol"},
		{Name: "dirty", Level: "symbol", Findings: []Finding{{OSV: "GO-2026-0001", Module: "golang.org/x/net", Version: "v0.49.0", Reach: Required}}},
	}}
	s := r.Summary()
	if !strings.Contains(s, "## dirty") || !strings.Contains(s, "| GO-2026-0001 |") {
		t.Errorf("summary lacks the binary after the clean one:\n%s", s)
	}
}

func TestWhereListsThreeSymbolsThenCounts(t *testing.T) {
	three := Finding{Symbols: []string{"p.A", "p.B", "p.C"}}
	if got, want := where(three), "p.A, p.B, p.C"; got != want {
		t.Errorf("where(3 symbols) = %q, want %q", got, want)
	}
	four := Finding{Symbols: []string{"p.A", "p.B", "p.C", "p.D"}}
	if got, want := where(four), "p.A, p.B, p.C and 1 more"; got != want {
		t.Errorf("where(4 symbols) = %q, want %q", got, want)
	}
}

func TestFixedCell(t *testing.T) {
	if got := fixedCell(""); got != "no fix" {
		t.Errorf(`fixedCell("") = %q, want "no fix"`, got)
	}
	if got := fixedCell("v1.2.3"); got != "v1.2.3" {
		t.Errorf(`fixedCell("v1.2.3") = %q`, got)
	}
}

func TestSemverGreater(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"v1.2.0", "", true},
		{"v1.3.0", "v1.2.0", true},
		{"v1.2.0", "v1.3.0", false},
	} {
		if got := semverGreater(tc.a, tc.b); got != tc.want {
			t.Errorf("semverGreater(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// A finding without a trace (not something govulncheck writes, but the
// stream is input) is left alone rather than crashing the report.
func TestNormaliseSkipsAFindingWithoutTrace(t *testing.T) {
	s := &stream{messages: []message{{Finding: &streamFinding{OSV: "GO-2026-0001"}}}, raw: make([]json.RawMessage, 1)}
	if err := s.normalise(); err != nil {
		t.Fatal(err)
	}
}
