package vulnreport

import (
	"strings"
	"testing"
)

// The numbers behind the release notes' side-by-side table: an advisory the
// overrides removed is listed once under overrides, one the toolchain
// removed under the toolchain, one still present under neither.
func TestCompareSeparatesOverridesFromToolchain(t *testing.T) {
	xnet := Finding{OSV: "GO-2026-0001", Module: "golang.org/x/net", Version: "v0.38.0", Fixed: "v0.45.0", Reach: Reachable}
	xnetImported := Finding{OSV: "GO-2026-0002", Module: "golang.org/x/net", Version: "v0.38.0", Fixed: "v0.45.0", Reach: Imported}
	std := Finding{OSV: "GO-2026-0003", Module: "stdlib", Version: "v1.26.8", Fixed: "v1.26.10", Reach: Reachable}
	kept := Finding{OSV: "GO-2026-0004", Module: "github.com/example/nofix", Version: "v1.0.0", Reach: Imported}
	stdKept := Finding{OSV: "GO-2026-0005", Module: "stdlib", Version: "v1.27.3", Reach: Imported}
	pristine := &Report{Binaries: []BinaryReport{{Name: "karmada-search", GoVersion: "go1.26.8",
		// The same advisory in two modules counts once and is listed once.
		Findings: []Finding{xnet, xnet, xnetImported, std, kept, {OSV: "GO-2026-0005", Module: "stdlib", Version: "v1.26.8", Reach: Imported}}}}}
	holdfast := &Report{Binaries: []BinaryReport{{Name: "karmada-search", GoVersion: "go1.27.3", Findings: []Finding{kept, stdKept}}}}

	cs, err := Compare(pristine, holdfast)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("%d comparisons, want 1", len(cs))
	}
	c := cs[0]
	if want := (SideCounts{Reachable: 2, Imported: 3, Stdlib: 2}); c.Pristine != want {
		t.Errorf("pristine counts %+v, want %+v", c.Pristine, want)
	}
	if want := (SideCounts{Reachable: 0, Imported: 2, Stdlib: 1}); c.Holdfast != want {
		t.Errorf("holdfast counts %+v, want %+v", c.Holdfast, want)
	}
	if len(c.Overrides) != 2 || c.Overrides[0].OSV != "GO-2026-0001" || c.Overrides[1].OSV != "GO-2026-0002" {
		t.Errorf("overrides fixed %+v, want GO-2026-0001 and GO-2026-0002", c.Overrides)
	}
	if len(c.Toolchain) != 1 || c.Toolchain[0].OSV != "GO-2026-0003" {
		t.Errorf("toolchain fixed %+v, want GO-2026-0003 only", c.Toolchain)
	}
	md := SideBySideMarkdown(cs, "pristine: go1.26.8 stands in for go1.25.10")
	for _, want := range []string{
		"| karmada-search | go1.26.8 | 2 / 3 / 2 | go1.27.3 | 0 / 2 / 1 | 2 | 1 |",
		"- GO-2026-0001: golang.org/x/net v0.38.0, fixed in v0.45.0 (reachable upstream)",
		"go1.26.8 stands in for go1.25.10",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestCompareRefusesAnUnpairedBinary(t *testing.T) {
	a := &Report{Binaries: []BinaryReport{{Name: "a"}}}
	b := &Report{Binaries: []BinaryReport{{Name: "b"}}}
	if _, err := Compare(a, b); err == nil || !strings.Contains(err.Error(), "binary b has no pristine scan") {
		t.Errorf("err = %v, want binary b has no pristine scan", err)
	}
	if _, err := Compare(&Report{Binaries: []BinaryReport{{Name: "a"}, {Name: "b"}}}, b); err == nil || !strings.Contains(err.Error(), "pristine binary a has no holdfast scan") {
		t.Errorf("err = %v, want pristine binary a has no holdfast scan", err)
	}
}
