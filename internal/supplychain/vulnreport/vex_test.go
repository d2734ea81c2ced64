package vulnreport

import (
	"encoding/json"
	"testing"
	"time"
)

func TestVEX(t *testing.T) {
	r := &Report{
		Scanner: "govulncheck v1.9.0",
		DB:      Database{Module: "golang.org/x/vulndb", Version: "v0.0.0-20261105234957-e22db6528018", Committed: time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)},
		Binaries: []BinaryReport{{
			Name: "karmada-controller-manager", MainModule: "github.com/karmada-io/karmada", MainVersion: "v1.18.3-0.20261204080407-dfb00591ccb5",
			Findings: []Finding{
				{OSV: "GO-2026-6603", Aliases: []string{"CVE-2026-78659"}, Module: "golang.org/x/net", Version: "v0.58.0", Fixed: "v0.60.0", Reach: Reachable},
				{OSV: "GO-2024-2817", Module: "github.com/karmada-io/karmada", Version: "v1.18.3-0.20261204080407-dfb00591ccb5", Reach: Reachable},
				{OSV: "GO-2026-5005", Module: "golang.org/x/crypto", Version: "v0.55.0", Fixed: "v0.56.0", Reach: Imported},
				{OSV: "GO-2026-6179", Module: "golang.org/x/mod", Version: "v0.38.0", Fixed: "v0.40.0", Reach: Required},
			},
		}},
	}
	data, err := r.VEX("https://example.test/vex", func(m, id string) (string, bool) {
		return "needs go 1.26", m == "github.com/karmada-io/karmada" && id == "GO-2026-6603"
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc vexDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Context != "https://openvex.dev/ns/v0.2.0" || doc.Timestamp != "2026-11-05T23:49:57Z" || len(doc.Statements) != 4 {
		t.Fatalf("document %+v", doc)
	}
	want := map[string][3]string{ // status, justification, action
		"GO-2024-2817": {"affected", "", "no fixed version of github.com/karmada-io/karmada exists; holdfast ships the fix when one does"},
		"GO-2026-5005": {"not_affected", "vulnerable_code_not_in_execute_path", ""},
		"GO-2026-6179": {"not_affected", "vulnerable_code_not_present", ""},
		"GO-2026-6603": {"affected", "", "waived: needs go 1.26"},
	}
	for _, s := range doc.Statements {
		w := want[s.Vulnerability.Name]
		if s.Status != w[0] || s.Justification != w[1] || s.ActionStatement != w[2] {
			t.Errorf("%s: %s %q %q, want %q", s.Vulnerability.Name, s.Status, s.Justification, s.ActionStatement, w)
		}
		if s.Products[0].ID != "pkg:golang/github.com/karmada-io/karmada@v1.18.3-0.20261204080407-dfb00591ccb5" {
			t.Errorf("%s: product %s", s.Vulnerability.Name, s.Products[0].ID)
		}
		// OpenVEX: not_affected needs a justification or impact
		// statement, affected an action statement.
		if (s.Status == "not_affected" && s.Justification == "" && s.ImpactStatement == "") || (s.Status == "affected" && s.ActionStatement == "") {
			t.Errorf("%s: statement incomplete for OpenVEX: %+v", s.Vulnerability.Name, s)
		}
	}
	again, _ := r.VEX("https://example.test/vex", func(string, string) (string, bool) { return "needs go 1.26", true })
	if len(again) == 0 {
		t.Fatal("no document")
	}
}
