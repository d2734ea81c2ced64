package vulnreport

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// VEXFile is the OpenVEX document's name in the report folder.
const VEXFile = "holdfast.openvex.json"

// OpenVEX v0.2.0 (https://github.com/openvex/spec), the subset holdfast
// writes.
type vexDoc struct {
	Context    string         `json:"@context"`
	ID         string         `json:"@id"`
	Author     string         `json:"author"`
	Timestamp  string         `json:"timestamp"`
	Version    int            `json:"version"`
	Tooling    string         `json:"tooling,omitempty"`
	Statements []vexStatement `json:"statements"`
}

type vexVuln struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
}

type vexComponent struct {
	ID string `json:"@id"`
}

type vexProduct struct {
	ID            string         `json:"@id"`
	Subcomponents []vexComponent `json:"subcomponents,omitempty"`
}

type vexStatement struct {
	Vulnerability   vexVuln      `json:"vulnerability"`
	Products        []vexProduct `json:"products"`
	Status          string       `json:"status"`
	Justification   string       `json:"justification,omitempty"`
	ImpactStatement string       `json:"impact_statement,omitempty"`
	ActionStatement string       `json:"action_statement,omitempty"`
	StatusNotes     string       `json:"status_notes,omitempty"`
}

// purl is a Go module's package URL; the standard library is
// pkg:golang/stdlib, as the SBOMs name it.
func purl(module, version string) string {
	return "pkg:golang/" + module + "@" + version
}

// VEX renders an OpenVEX document with one statement per advisory, binary
// and affected module that the report lists: what a scanner reading the
// binaries finds, and holdfast's verdict on it.
//
//   - reachable (a vulnerable function is linked in): affected; the action
//     is the waiver's reason (waived returns it), or "no fixed version" when
//     there is none. A reachable advisory with a fix and no waiver is
//     affected too, with the fixed version as the action: the release gate
//     refuses such a release, so a shipped document has none;
//   - imported (the package, none of its vulnerable functions):
//     not_affected, vulnerable_code_not_in_execute_path;
//   - required (the module, none of its vulnerable packages): not_affected,
//     vulnerable_code_not_present;
//   - unknown: under_investigation.
//
// The timestamp is the database snapshot's commit time, so the same scan
// gives the same bytes. id names the document (an IRI).
func (r *Report) VEX(id string, waived func(mainModule, osv string) (string, bool)) ([]byte, error) {
	doc := vexDoc{
		Context:   "https://openvex.dev/ns/v0.2.0",
		ID:        id,
		Author:    "holdfast release (govulncheck findings, holdfast waivers)",
		Timestamp: r.DB.Committed.UTC().Format(time.RFC3339),
		Version:   1,
		Tooling:   r.Scanner + " against " + r.DB.Module + "@" + r.DB.Version,
	}
	for _, b := range r.Binaries {
		product := purl(b.MainModule, b.MainVersion)
		for _, f := range b.Findings {
			s := vexStatement{
				Vulnerability: vexVuln{Name: f.OSV, Aliases: f.Aliases},
				Products:      []vexProduct{{ID: product, Subcomponents: []vexComponent{{ID: purl(f.Module, f.Version)}}}},
				StatusNotes:   b.Name + ": " + string(f.Reach) + " per " + r.Scanner,
			}
			switch f.Reach {
			case Reachable:
				s.Status = "affected"
				why, ok := waived(b.MainModule, f.OSV)
				switch {
				case ok:
					s.ActionStatement = "waived: " + why
				case f.Fixed == "":
					s.ActionStatement = "no fixed version of " + f.Module + " exists; holdfast ships the fix when one does"
				default:
					s.ActionStatement = "update " + f.Module + " to " + f.Fixed
				}
			case Imported:
				s.Status, s.Justification = "not_affected", "vulnerable_code_not_in_execute_path"
				s.ImpactStatement = "the vulnerable package is linked in, none of its vulnerable functions (govulncheck binary mode, symbol table)"
			case Required:
				s.Status, s.Justification = "not_affected", "vulnerable_code_not_present"
				s.ImpactStatement = "the module is in the binary, none of its vulnerable packages"
			default:
				s.Status = "under_investigation"
				if f.Note != "" {
					s.StatusNotes += "; " + f.Note
				}
			}
			doc.Statements = append(doc.Statements, s)
		}
	}
	sort.SliceStable(doc.Statements, func(i, j int) bool {
		a, b := doc.Statements[i], doc.Statements[j]
		if a.Vulnerability.Name != b.Vulnerability.Name {
			return a.Vulnerability.Name < b.Vulnerability.Name
		}
		return a.Products[0].ID+a.StatusNotes < b.Products[0].ID+b.StatusNotes
	})
	if doc.Statements == nil {
		doc.Statements = []vexStatement{}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("OpenVEX document: %w", err)
	}
	return append(out, '\n'), nil
}
