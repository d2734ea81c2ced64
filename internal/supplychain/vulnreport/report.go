package vulnreport

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// FolderName is the report's folder, in a release and under
// _output/reports.
const FolderName = "vulnerabilities"

// SummaryFile is the report's Markdown summary inside FolderName.
const SummaryFile = "SUMMARY.md"

// Report is the result of scanning a set of binaries against one database.
type Report struct {
	// Scanner is govulncheck's name and version as its output states them
	// ("govulncheck v1.9.0").
	Scanner  string         `json:"scanner"`
	DB       Database       `json:"db"`
	Binaries []BinaryReport `json:"binaries"`
}

// Counts are a binary's advisories by their most serious reach: an
// advisory affecting two modules of the binary counts once.
type Counts struct {
	Reachable int `json:"reachable"`
	Unknown   int `json:"unknown"`
	// Other is imported or required only: no vulnerable function in the
	// binary.
	Other int `json:"other"`
}

// Counts counts the binary's advisories.
func (b BinaryReport) Counts() Counts {
	best := map[string]Reach{}
	for _, f := range b.Findings {
		if r, ok := best[f.OSV]; !ok || f.Reach.rank() < r.rank() {
			best[f.OSV] = f.Reach
		}
	}
	var c Counts
	for _, r := range best {
		switch r {
		case Reachable:
			c.Reachable++
		case Unknown:
			c.Unknown++
		default:
			c.Other++
		}
	}
	return c
}

// String is the counts as the report words them.
func (c Counts) String() string {
	s := fmt.Sprintf("%d reachable", c.Reachable)
	if c.Unknown > 0 {
		s += fmt.Sprintf(", %d of unknown reachability", c.Unknown)
	}
	return s + fmt.Sprintf(", %d in imported packages or required modules only", c.Other)
}

// WriteReport scans bins (building govulncheck and the database under
// root/.cache first if needed) and writes the report folder
// dir/vulnerabilities; the release assembly calls it with its staging
// folder and puts Report.Markdown in the notes.
func WriteReport(ctx context.Context, root, dir string, bins []Binary) (*Report, error) {
	r, err := Scan(ctx, root, bins)
	if err != nil {
		return nil, err
	}
	if err := r.Write(dir); err != nil {
		return nil, err
	}
	return r, nil
}

// Write writes the report folder dir/vulnerabilities: SUMMARY.md, and per
// binary govulncheck's JSON stream (<binary>.json, plus
// <binary>.main-module.json when the main module was looked up). The folder
// is staged beside its destination and renamed into place, replacing an
// earlier report, so a reader never sees a half-written one.
func (r *Report) Write(dir string) error {
	final := filepath.Join(dir, FolderName)
	tmp, err := os.MkdirTemp(dir, "."+FolderName+"-")
	if err != nil {
		return fmt.Errorf("writing the vulnerability report: %w", err)
	}
	defer os.RemoveAll(tmp)
	files := map[string][]byte{SummaryFile: []byte(r.Summary())}
	for _, b := range r.Binaries {
		if b.stream == nil {
			return fmt.Errorf("writing the vulnerability report: %s has no govulncheck output (a Report is written from a Scan)", b.Name)
		}
		files[b.Name+".json"] = b.stream
		if b.mainStream != nil {
			files[b.Name+".main-module.json"] = b.mainStream
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return fmt.Errorf("writing the vulnerability report: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("writing the vulnerability report: %w", err)
	}
	old := filepath.Join(dir, "."+FolderName+"-old")
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("writing the vulnerability report: %w", err)
	}
	hadOld := false
	if err := os.Rename(final, old); err == nil {
		hadOld = true
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("writing the vulnerability report: moving the previous one aside: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if hadOld {
			_ = os.Rename(old, final)
		}
		return fmt.Errorf("writing the vulnerability report: %w", err)
	}
	return os.RemoveAll(old)
}

// row is a finding across binaries: the same advisory, module, versions
// and reach in each of them.
type row struct {
	Finding
	binaries []string
}

// rows groups the findings of every binary whose reach is in reaches.
func (r *Report) rows(reaches ...Reach) []row {
	var out []row
	for _, b := range r.Binaries {
		for _, f := range b.Findings {
			if !slices.Contains(reaches, f.Reach) {
				continue
			}
			i := slices.IndexFunc(out, func(x row) bool {
				return x.OSV == f.OSV && x.Module == f.Module && x.Version == f.Version && x.Fixed == f.Fixed && x.Reach == f.Reach
			})
			if i < 0 {
				out = append(out, row{Finding: f})
				i = len(out) - 1
			}
			out[i].binaries = append(out[i].binaries, b.Name)
		}
	}
	slices.SortFunc(out, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Reach.rank(), b.Reach.rank()), cmp.Compare(a.Module, b.Module), cmp.Compare(a.OSV, b.OSV),
			semver.Compare(a.Version, b.Version), semver.Compare(a.Fixed, b.Fixed))
	})
	return out
}

// source is the sentence naming the scanner and the database.
func (r *Report) source() string {
	return fmt.Sprintf("Scanned by %s (binary mode) against the Go vulnerability database %s (snapshot of %s, %d advisories), an offline snapshot from the Go module proxy.",
		r.Scanner, r.DB, r.DB.Committed.Format(time.DateOnly), r.DB.Entries)
}

// Markdown is the report's section of the release notes: the database, per
// binary the counts, the standard library's advisories, and per module
// version the reachable and unknown advisories, by ID, with the version
// that fixes them. Modules with advisories that are only imported or
// required are named too: a known-vulnerable module is never left out, only
// ranked. SUMMARY.md has each advisory's summary and symbols.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("### Known vulnerabilities\n\n")
	b.WriteString(r.source())
	fmt.Fprintf(&b, " govulncheck's output per binary and the full list: `%s/%s`.\n\n", FolderName, SummaryFile)
	for _, br := range r.Binaries {
		fmt.Fprintf(&b, "- `%s` (%s, %s level): %s.\n", br.Name, br.GoVersion, br.Level, br.Counts())
	}
	for _, line := range r.stdlibLines() {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	if mods := r.affectedModules(); len(mods) > 0 {
		b.WriteString("\n| module | version | fixed in (these) | reachable | unknown reach | binaries |\n|---|---|---|---|---|---|\n")
		for _, m := range mods {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(m.module), m.version, m.upgrade(),
				strings.Join(m.ids[Reachable], ", "), strings.Join(m.ids[Unknown], ", "), cell(strings.Join(m.binaries, ", ")))
		}
	}
	if others := r.otherModules(); len(others) > 0 {
		fmt.Fprintf(&b, "\nImported or required only (no vulnerable function in the binary): %s.\n", strings.Join(others, "; "))
	}
	return b.String()
}

// moduleRow is a module version with reachable or unknown advisories
// in some binaries.
type moduleRow struct {
	module, version string
	ids             map[Reach][]string
	fixed           string   // the highest fixed version of its advisories
	noFix           []string // advisories without a fix
	binaries        []string
}

// upgrade is the version that fixes every advisory listed (reachable and
// unknown ones: an imported or required one may need a later version), and
// those that no version fixes.
func (m moduleRow) upgrade() string {
	switch {
	case len(m.noFix) == 0:
		return m.fixed
	case m.fixed == "":
		return "no fix"
	}
	return fmt.Sprintf("%s (no fix for %s)", m.fixed, strings.Join(m.noFix, ", "))
}

// affectedModules groups the reachable and unknown findings of every
// binary by module version, sorted by module and version.
func (r *Report) affectedModules() []moduleRow {
	var out []moduleRow
	for _, x := range r.rows(Reachable, Unknown) {
		i := slices.IndexFunc(out, func(m moduleRow) bool { return m.module == x.Module && m.version == x.Version })
		if i < 0 {
			out = append(out, moduleRow{module: x.Module, version: x.Version, ids: map[Reach][]string{}})
			i = len(out) - 1
		}
		m := &out[i]
		m.ids[x.Reach] = appendUnique(m.ids[x.Reach], x.OSV)
		if x.Fixed == "" {
			m.noFix = appendUnique(m.noFix, x.OSV)
		} else if semverGreater(x.Fixed, m.fixed) {
			m.fixed = x.Fixed
		}
		for _, b := range x.binaries {
			m.binaries = appendUnique(m.binaries, b)
		}
	}
	for i := range out {
		m := &out[i]
		slices.Sort(m.ids[Reachable])
		slices.Sort(m.ids[Unknown])
		slices.Sort(m.noFix)
		slices.Sort(m.binaries)
	}
	slices.SortFunc(out, func(a, b moduleRow) int {
		return cmp.Or(cmp.Compare(a.module, b.module), semver.Compare(a.version, b.version))
	})
	return out
}

// stdlibLines says, per Go version, which standard library advisories the
// binaries built with it carry and the Go release that fixes them all.
func (r *Report) stdlibLines() []string {
	type goRel struct {
		ids, reachable []string
		fixed          string
	}
	byGo := map[string]*goRel{}
	var versions []string
	for _, br := range r.Binaries {
		for _, f := range br.Findings {
			if f.Module != stdlib {
				continue
			}
			g := byGo[br.GoVersion]
			if g == nil {
				g = &goRel{}
				byGo[br.GoVersion] = g
				versions = append(versions, br.GoVersion)
			}
			g.ids = appendUnique(g.ids, f.OSV)
			if f.Reach == Reachable {
				g.reachable = appendUnique(g.reachable, f.OSV)
			}
			if f.Fixed == "" {
				g.fixed = "none"
			} else if g.fixed != "none" && semverGreater(f.Fixed, g.fixed) {
				g.fixed = f.Fixed
			}
		}
	}
	slices.Sort(versions)
	var lines []string
	for _, v := range versions {
		g := byGo[v]
		slices.Sort(g.ids)
		slices.Sort(g.reachable)
		fixed := "no Go release fixes them all yet"
		if g.fixed != "none" {
			fixed = "all fixed in go" + strings.TrimPrefix(g.fixed, "v")
		}
		line := fmt.Sprintf("Standard library %s: %s (%s), %s", v, plural(len(g.ids), "advisory", "advisories"), strings.Join(g.ids, ", "), fixed)
		if len(g.reachable) > 0 {
			line += fmt.Sprintf("; reachable: %s", strings.Join(g.reachable, ", "))
		}
		lines = append(lines, line+".")
	}
	return lines
}

// otherModules names each module with advisories that are only imported or
// required, with its version and the advisories.
func (r *Report) otherModules() []string {
	byModule := map[string][]string{}
	var keys []string
	for _, x := range r.rows(Imported, Required) {
		k := x.Module + " " + x.Version
		if _, ok := byModule[k]; !ok {
			keys = append(keys, k)
		}
		byModule[k] = appendUnique(byModule[k], x.OSV)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		ids := byModule[k]
		slices.Sort(ids)
		out = append(out, fmt.Sprintf("%s (%s)", k, strings.Join(ids, ", ")))
	}
	return out
}

// Summary is SUMMARY.md: the database, how to read the report, and per
// binary every finding.
func (r *Report) Summary() string {
	var b strings.Builder
	b.WriteString("# Known vulnerabilities\n\n")
	b.WriteString(r.source())
	b.WriteString("\n\n## Database\n\n| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| snapshot | `%s` (`%s`) |\n", r.DB, r.DB.Sum)
	fmt.Fprintf(&b, "| snapshot commit time | %s |\n", r.DB.Committed.Format(time.RFC3339))
	fmt.Fprintf(&b, "| index/db.json last modified | %s%s |\n", r.DB.LastModified.Format(time.RFC3339), lastModifiedNote(r.DB))
	fmt.Fprintf(&b, "| advisories | %d |\n", r.DB.Entries)
	b.WriteString("| source | offline snapshot from the Go module proxy (checked against the checksum database and the pinned h1: hash), indexed by x/vulndb's cmd/indexdb; nothing was fetched from vuln.go.dev |\n")
	fmt.Fprintf(&b, "| scanner | %s: `-mode=binary` per binary, `-mode=query` for a main module recorded as (devel) |\n", r.Scanner)
	b.WriteString(`
## How to read it

- **reachable**: a vulnerable function is in the binary's symbol table. The linker keeps
  only code the program can reach by its own (conservative) analysis, so the function is
  linked in and reachable as far as the linker can tell; binary mode sees no call paths.
- **unknown**: the module is at an affected version and govulncheck could not look
  further: the binary has no symbol table, or the advisory is of the binary's own main
  module, looked up by the version it was built from.
- **imported**: a vulnerable package is linked in, but none of its vulnerable functions.
- **required**: the module is in the binary at an affected version, but none of its
  vulnerable packages.

Counts are of advisories, each at its most serious reach. ` + "`<binary>.json`" + ` is
govulncheck's JSON output, messages in a fixed order, its ` + "`db`" + ` naming the snapshot;
` + "`govulncheck -mode=convert < <binary>.json`" + ` prints it as govulncheck's text report.
`)
	for _, br := range r.Binaries {
		fmt.Fprintf(&b, "\n## %s\n\n", br.Name)
		fmt.Fprintf(&b, "- built with %s; govulncheck reached the %s level", br.GoVersion, br.Level)
		if br.Level != "symbol" {
			b.WriteString(" (no symbol table: every finding is of unknown reach)")
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "- main module `%s` %s: ", br.MainModule, br.MainVersion)
		switch {
		case br.CheckedMainVersion == "":
			b.WriteString("its own advisories were **not** looked up (no version given for a (devel) build)\n")
		case br.CheckedMainVersion != br.MainVersion:
			fmt.Fprintf(&b, "its own advisories looked up at %s, the version it was built from\n", br.CheckedMainVersion)
		default:
			b.WriteString("its own advisories checked by govulncheck at that version\n")
		}
		fmt.Fprintf(&b, "- %s\n", br.Counts())
		if len(br.Findings) == 0 {
			b.WriteString("\nNo known vulnerability.\n")
			continue
		}
		b.WriteString("\n| advisory | aliases | module | version | fixed in | reach | in the binary | summary |\n|---|---|---|---|---|---|---|---|\n")
		for _, f := range br.Findings {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
				f.OSV, cell(strings.Join(f.Aliases, ", ")), cell(f.Module), f.Version, fixedCell(f.Fixed), f.Reach, cell(where(f)), cell(f.Summary))
		}
	}
	return b.String()
}

func lastModifiedNote(d Database) string {
	if !d.LastModified.IsZero() {
		return ""
	}
	return " (unset: x/vulndb's data/osv files carry no dates, vuln.go.dev sets them from git history when it deploys; the snapshot commit time dates this database)"
}

// symbolsShown is how many vulnerable functions a summary row lists; the
// JSON has them all.
const symbolsShown = 3

// where says what of the finding is in the binary.
func where(f Finding) string {
	switch {
	case f.Note != "":
		return f.Note
	case len(f.Symbols) > 0:
		s := strings.Join(f.Symbols[:min(symbolsShown, len(f.Symbols))], ", ")
		if n := len(f.Symbols) - symbolsShown; n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		return s
	case len(f.Packages) > 0:
		return "packages " + strings.Join(f.Packages, ", ")
	}
	return "module only"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func fixedCell(v string) string {
	if v == "" {
		return "no fix"
	}
	return v
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func semverGreater(a, b string) bool {
	return b == "" || semver.Compare(a, b) > 0
}
