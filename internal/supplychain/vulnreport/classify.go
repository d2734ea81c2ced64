package vulnreport

import (
	"cmp"
	"slices"

	"golang.org/x/mod/semver"
)

// Reach is how far govulncheck could follow a vulnerability into a binary.
type Reach string

const (
	// Reachable: a vulnerable function is in the binary's symbol table.
	Reachable Reach = "reachable"
	// Unknown: the module is at an affected version and govulncheck could
	// not look further (no symbol table, or the binary's own main module
	// matched by version).
	Unknown Reach = "unknown"
	// Imported: a vulnerable package is linked in, no vulnerable function.
	Imported Reach = "imported"
	// Required: the module is in the binary at an affected version, no
	// vulnerable package.
	Required Reach = "required"
)

// rank orders reaches from the most to the least serious; a vulnerability
// found at several reaches (in several modules) counts at its first.
func (r Reach) rank() int {
	return slices.Index([]Reach{Reachable, Unknown, Imported, Required}, r)
}

// stdlib is govulncheck's module path for the standard library.
const stdlib = "stdlib"

// Finding is one vulnerability in one module of a binary.
type Finding struct {
	// OSV is the advisory's ID (GO-YYYY-NNNN), Aliases its CVE and GHSA
	// IDs, Summary its one-line summary.
	OSV     string   `json:"osv"`
	Aliases []string `json:"aliases,omitempty"`
	Summary string   `json:"summary"`
	// Module is the affected module's path, "stdlib" for the standard
	// library; Version is the version in the binary ("v1.26.8" for Go
	// 1.26.8); Fixed is the first version without the vulnerability, empty
	// when there is none.
	Module  string `json:"module"`
	Version string `json:"version"`
	Fixed   string `json:"fixed,omitempty"`
	Reach   Reach  `json:"reach"`
	// Symbols are the vulnerable functions in the binary (Reachable), as
	// package.Function or package.Receiver.Method; Packages the vulnerable
	// packages linked in (Imported and Reachable). Both sorted.
	Symbols  []string `json:"symbols,omitempty"`
	Packages []string `json:"packages,omitempty"`
	// Note says why Reach is Unknown.
	Note string `json:"note,omitempty"`
}

// classify turns a binary-mode stream into findings, one per advisory and
// affected module. symbols says whether the binary has a symbol table.
//
// Module-level findings (a trace frame with no package) give module,
// version and fixed version: govulncheck emits one per affected module from
// the binary's build information. Package and symbol findings raise the
// reach of their module's finding; s must have been normalised, so that
// they name the right module.
func classify(s *stream, symbols bool) []Finding {
	entries := map[string]*osvEntry{}
	for _, m := range s.messages {
		if m.OSV != nil {
			entries[m.OSV.ID] = m.OSV
		}
	}
	type key struct{ osv, module string }
	byKey := map[key]*Finding{}
	get := func(osv, module, version, fixed string) *Finding {
		k := key{osv, module}
		if f, ok := byKey[k]; ok {
			if f.Fixed == "" {
				f.Fixed = fixed
			}
			return f
		}
		f := &Finding{OSV: osv, Module: module, Version: version, Fixed: fixed, Reach: Required}
		if e := entries[osv]; e != nil {
			f.Summary, f.Aliases = e.Summary, slices.Clone(e.Aliases)
		}
		byKey[k] = f
		return f
	}
	var deeper []*streamFinding
	for _, m := range s.messages {
		if m.Finding == nil || len(m.Finding.Trace) == 0 {
			continue
		}
		if fr := m.Finding.Trace[0]; fr.Package == "" {
			get(m.Finding.OSV, fr.Module, fr.Version, m.Finding.FixedVersion)
		} else {
			deeper = append(deeper, m.Finding)
		}
	}
	for _, sf := range deeper {
		fr := sf.Trace[0]
		f := get(sf.OSV, fr.Module, fr.Version, sf.FixedVersion)
		f.Packages = appendUnique(f.Packages, fr.Package)
		if f.Reach == Required {
			f.Reach = Imported
		}
		if fr.Function != "" {
			f.Reach = Reachable
			sym := fr.Function
			if fr.Receiver != "" {
				sym = fr.Receiver + "." + sym
			}
			f.Symbols = appendUnique(f.Symbols, fr.Package+"."+sym)
		}
	}

	out := make([]Finding, 0, len(byKey))
	for _, f := range byKey {
		if !symbols {
			// Without a symbol table govulncheck assumes every known
			// vulnerable symbol of the module is present (x/vuln
			// internal/vulncheck/binary.go, allKnownVulnerableSymbols):
			// its symbols and packages say nothing about this binary.
			f.Reach, f.Symbols, f.Packages = Unknown, nil, nil
			f.Note = "the binary has no symbol table (linked with -s): govulncheck cannot tell which vulnerable packages and functions are in it"
		}
		slices.Sort(f.Symbols)
		slices.Sort(f.Packages)
		out = append(out, *f)
	}
	sortFindings(out)
	return out
}

// queryFindings turns a query-mode stream (the advisories of module at
// version) into findings of Unknown reach.
func queryFindings(s *stream, module, version, note string) []Finding {
	var out []Finding
	for _, m := range s.messages {
		if m.OSV == nil {
			continue
		}
		out = append(out, Finding{
			OSV:     m.OSV.ID,
			Aliases: slices.Clone(m.OSV.Aliases),
			Summary: m.OSV.Summary,
			Module:  module,
			Version: version,
			Fixed:   m.OSV.fixedIn(module),
			Reach:   Unknown,
			Note:    note,
		})
	}
	sortFindings(out)
	return out
}

// fixedIn is the latest "fixed" event of the entry's SEMVER ranges for
// module, with the "v" of a Go module version, or "" when none has a fix:
// the version govulncheck itself reports as fixed_version.
func (e *osvEntry) fixedIn(module string) string {
	latest := ""
	for _, a := range e.Affected {
		if a.Package.Name != module {
			continue
		}
		for _, r := range a.Ranges {
			if r.Type != "SEMVER" {
				continue
			}
			for _, ev := range r.Events {
				if v := "v" + ev.Fixed; ev.Fixed != "" && semver.Compare(v, latest) > 0 {
					latest = v
				}
			}
		}
	}
	return latest
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// sortFindings orders findings by reach (most serious first), module and
// advisory, so reports are the same whatever order govulncheck wrote.
func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Reach.rank(), b.Reach.rank()),
			cmp.Compare(a.Module, b.Module),
			cmp.Compare(a.OSV, b.OSV),
		)
	})
}
