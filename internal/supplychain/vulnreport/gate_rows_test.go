package vulnreport

import (
	"strings"
	"testing"
)

func TestGateSortsReachableAdvisories(t *testing.T) {
	r := &Report{Binaries: []BinaryReport{{Name: "app", MainModule: "example.com/up", Findings: []Finding{
		{OSV: "GO-2026-0001", Module: "golang.org/x/net", Version: "v0.58.0", Fixed: "v0.60.0", Reach: Reachable},
		{OSV: "GO-2026-0001", Module: "golang.org/x/net", Version: "v0.58.0", Fixed: "v0.60.0", Reach: Reachable},
		{OSV: "GO-2024-2817", Module: "example.com/up", Version: "v1.0.0", Reach: Reachable},
		{OSV: "GO-2026-0002", Module: "example.com/lib", Version: "v1.0.0", Fixed: "v1.1.0", Reach: Reachable},
		{OSV: "GO-2026-0003", Module: "example.com/lib", Version: "v1.0.0", Fixed: "v1.1.0", Reach: Imported},
	}}}}
	rows := r.Gate(func(m, id string) (string, bool) {
		if m == "example.com/up" && id == "GO-2026-0002" {
			return "breaks: x", true
		}
		return "", false
	})
	want := "app: reachable with a fix 1 (GO-2026-0001 (golang.org/x/net v0.58.0, fixed in v0.60.0)); reachable without a fix 1 (GO-2024-2817); waived 1 (GO-2026-0002: breaks: x)"
	if len(rows) != 1 || rows[0].String() != want {
		t.Errorf("Gate:\n got %v\nwant %s", rows, want)
	}
	if md := GateMarkdown(rows); !strings.Contains(md, "| app | 1: GO-2026-0001 (golang.org/x/net v0.58.0, fixed in v0.60.0) | 1: GO-2024-2817 | 1: GO-2026-0002: breaks: x |") {
		t.Errorf("GateMarkdown:\n%s", md)
	}
}
