package vulnreport

import (
	"slices"
	"testing"
)

// One row per distinct finding: the same finding in two binaries is one row
// naming both, and a finding differing in any one field is a row of its own.
func TestRowsGroupOnlyIdenticalFindings(t *testing.T) {
	base := Finding{OSV: "GO-2026-0001", Module: "golang.org/x/net", Version: "v0.49.0", Fixed: "v0.50.0", Reach: Imported}
	variants := []Finding{base, base, base, base, base}
	variants[0].OSV = "GO-2026-0002"
	variants[1].Module = "golang.org/x/text"
	variants[2].Version = "v0.48.0"
	variants[3].Fixed = "v0.51.0"
	variants[4].Reach = Required
	r := &Report{Binaries: []BinaryReport{
		{Name: "a", Findings: []Finding{base}},
		{Name: "b", Findings: append([]Finding{base}, variants...)},
	}}
	rows := r.rows(Imported, Required)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6 (the shared finding and five variants): %+v", len(rows), rows)
	}
	for _, row := range rows {
		want := []string{"b"}
		if row.Finding.OSV == base.OSV && row.Finding.Module == base.Module && row.Finding.Version == base.Version &&
			row.Finding.Fixed == base.Fixed && row.Finding.Reach == base.Reach {
			want = []string{"a", "b"}
		}
		if !slices.Equal(row.binaries, want) {
			t.Errorf("row %+v: binaries %q, want %q", row.Finding, row.binaries, want)
		}
	}
}

func TestCountsStringOmitsZeroUnknown(t *testing.T) {
	if got, want := (Counts{Reachable: 1, Other: 2}).String(), "1 reachable, 2 in imported packages or required modules only"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := (Counts{Unknown: 3}).String(), "0 reachable, 3 of unknown reachability, 0 in imported packages or required modules only"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
