package vulnreport

import (
	"fmt"
	"slices"
	"strings"
)

// SideCounts are one binary's numbers in the side-by-side table: distinct
// advisories by their most serious reach (Reachable; Imported counts those
// with no vulnerable function linked in, imported or required only), and
// how many of all its advisories are the standard library's.
type SideCounts struct {
	Reachable int `json:"reachable"`
	Imported  int `json:"imported"`
	Stdlib    int `json:"stdlib"`
}

func sideCounts(b BinaryReport) SideCounts {
	c := b.Counts()
	std := map[string]bool{}
	for _, f := range b.Findings {
		if f.Module == "stdlib" {
			std[f.OSV] = true
		}
	}
	return SideCounts{Reachable: c.Reachable, Imported: c.Other, Stdlib: len(std)}
}

// Remedied is an advisory pristine's binary has and holdfast's does not.
type Remedied struct {
	OSV    string `json:"osv"`
	Module string `json:"module"`
	// From is the module's version in pristine's binary, Fixed the first
	// version without the advisory.
	From  string `json:"from"`
	Fixed string `json:"fixed,omitempty"`
	Reach Reach  `json:"reach"`
}

// Comparison is one binary of pristine upstream next to holdfast's.
type Comparison struct {
	Name string `json:"name"`
	// PristineGo and HoldfastGo are the Go releases each was built with.
	PristineGo, HoldfastGo string
	Pristine, Holdfast     SideCounts
	// Overrides are the module advisories gone in holdfast's binary (the
	// dependency overrides' work), Toolchain the standard library's (the
	// toolchain's); each sorted by module then ID.
	Overrides, Toolchain []Remedied
}

// Compare pairs the binaries of a pristine and a holdfast scan by name, in
// holdfast's order. A binary missing from either side is an error: a table
// with a blank column would read as "no advisories".
func Compare(pristine, holdfast *Report) ([]Comparison, error) {
	byName := map[string]BinaryReport{}
	for _, b := range pristine.Binaries {
		byName[b.Name] = b
	}
	var out []Comparison
	for _, h := range holdfast.Binaries {
		p, ok := byName[h.Name]
		if !ok {
			return nil, fmt.Errorf("side-by-side: binary %s has no pristine scan", h.Name)
		}
		delete(byName, h.Name)
		c := Comparison{Name: h.Name, PristineGo: p.GoVersion, HoldfastGo: h.GoVersion, Pristine: sideCounts(p), Holdfast: sideCounts(h)}
		left := map[string]Finding{}
		for _, f := range h.Findings {
			left[f.OSV+" "+f.Module] = f
		}
		seen := map[string]bool{}
		for _, f := range p.Findings {
			key := f.OSV + " " + f.Module
			if _, still := left[key]; still || seen[key] {
				continue
			}
			seen[key] = true
			r := Remedied{OSV: f.OSV, Module: f.Module, From: f.Version, Fixed: f.Fixed, Reach: f.Reach}
			if f.Module == "stdlib" {
				c.Toolchain = append(c.Toolchain, r)
			} else {
				c.Overrides = append(c.Overrides, r)
			}
		}
		sortRemedied(c.Overrides)
		sortRemedied(c.Toolchain)
		out = append(out, c)
	}
	for name := range byName {
		return nil, fmt.Errorf("side-by-side: pristine binary %s has no holdfast scan", name)
	}
	return out, nil
}

func sortRemedied(rs []Remedied) {
	slices.SortFunc(rs, func(a, b Remedied) int {
		if c := strings.Compare(a.Module, b.Module); c != 0 {
			return c
		}
		return strings.Compare(a.OSV, b.OSV)
	})
}

// SideBySideMarkdown is the table `holdfast vulns --pristine` prints and the
// release notes carry, then per binary what the overrides fixed.
func SideBySideMarkdown(cs []Comparison, pristineNote string) string {
	var b strings.Builder
	b.WriteString("### Pristine upstream vs holdfast\n\n")
	if pristineNote != "" {
		b.WriteString(pristineNote + "\n\n")
	}
	b.WriteString("| binary | upstream Go | upstream reachable / imported / stdlib | holdfast Go | holdfast reachable / imported / stdlib | fixed by overrides | fixed by the toolchain |\n|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "| %s | %s | %d / %d / %d | %s | %d / %d / %d | %d | %d |\n", cell(c.Name),
			c.PristineGo, c.Pristine.Reachable, c.Pristine.Imported, c.Pristine.Stdlib,
			c.HoldfastGo, c.Holdfast.Reachable, c.Holdfast.Imported, c.Holdfast.Stdlib,
			len(c.Overrides), len(c.Toolchain))
	}
	for _, c := range cs {
		if len(c.Overrides) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nFixed in `%s` by the overrides:\n", c.Name)
		for _, r := range c.Overrides {
			fmt.Fprintf(&b, "- %s: %s %s, fixed in %s (%s upstream)\n", r.OSV, r.Module, r.From, fixedCell(r.Fixed), r.Reach)
		}
	}
	return b.String()
}
