package overrides

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// FileName is the overrides file's name in a series folder.
const FileName = "overrides"

// Entry is one module's override.
type Entry struct {
	Module  string
	Version string
	// Fixes are the advisory IDs the version fixes: GO-YYYY-NNNN and
	// their CVE (or GHSA) aliases.
	Fixes []string
	// DropWhen is the upstream requirement from which the entry is not
	// needed: upstream requires >= DropWhen.
	DropWhen string
	// Why says why this version.
	Why string
	// Line is where the entry starts in the file.
	Line int
}

// GoLine raises the patched tree's go line: a fixed version whose go.mod
// says a newer go than upstream's is taken with the line it needs, and the
// apply step adds `godebug default=go<upstream's line>` so the binaries
// keep upstream's GODEBUG defaults (Go 1.23 and later read it).
type GoLine struct {
	// Version is the go line, as go.mod writes it (1.26.0).
	Version string
	// Why names the entries that need it.
	Why  string
	Line int
}

// Waiver excuses a reachable advisory with a fixed version that no entry
// can take, so that the release gate lets it through; it ships in the VEX
// as affected, with the reason.
type Waiver struct {
	ID string
	// Blocker is why no entry can take the fix: one of Blockers.
	Blocker string
	Why     string
	// EndsWhen is what ends the waiver.
	EndsWhen string
	Line     int
}

// Blockers are the reasons a fix may be left out, with what each means.
// The go line is not one: a go entry raises it, and the godebug line the
// apply step writes keeps upstream's GODEBUG defaults.
var Blockers = map[string]string{
	"breaks":      "the fixed version breaks the tree (its build, an API upstream uses, or upstream's tests): why names which",
	"unavailable": "no fixed version can be fetched (not released, retracted, or not served by the module proxy)",
}

// File is a parsed overrides file.
type File struct {
	Go      *GoLine
	Entries []Entry
	Waivers []Waiver
}

var advisoryID = regexp.MustCompile(`^(GO-\d{4}-\d{4,}|CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3})$`)

// goVersion is a go line as `go get go@V` writes it: a release, three
// numbers (1.26.0), no release candidate.
var goVersion = regexp.MustCompile(`^1\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`)

// goLineReason finds a waiver that gives the go line (or the GODEBUG
// defaults it used to set) as its reason, the way waivers were written
// before the go entry existed.
var goLineReason = regexp.MustCompile(`(?i)go line|go\.mod(?: files)? says? go 1\.|GODEBUG`)

const dropWhenPrefix = "upstream requires >= "

// Parse reads an overrides file. The format is an optional go line entry,
// module entries, then waivers:
//
//	go 1.26.0
//		why golang.org/x/net v0.60.0 below says go 1.26.0
//
//	golang.org/x/net v0.60.0
//		fixes GO-2026-6603 CVE-2026-78659
//		drop-when upstream requires >= v0.60.0
//		why smallest fixed version; x/net tags minors only
//
//	waive GO-2026-9999
//		blocker breaks
//		why the fixed version removes an API upstream calls (pkg/x)
//		ends-when upstream stops calling it, or the series patches the caller
//
// Comments (#) and blank lines are ignored. Every field is required once;
// anything else is an error naming the line. A waiver whose reason is the
// go line is refused: a go entry raises it and keeps upstream's GODEBUG
// defaults.
func Parse(name string, data []byte) (File, error) {
	var file File
	seen := map[string]int{}
	var cur *Entry
	var waiver *Waiver
	var goLine *GoLine
	fields := map[string]bool{}
	finish := func() error {
		defer func() { cur, waiver, goLine, fields = nil, nil, nil, map[string]bool{} }()
		switch {
		case goLine != nil:
			if goLine.Why == "" {
				return fmt.Errorf("%s:%d: go %s has no why line (which entries need it)", name, goLine.Line, goLine.Version)
			}
			file.Go = goLine
		case waiver != nil:
			if err := checkWaiver(name, waiver); err != nil {
				return err
			}
			file.Waivers = append(file.Waivers, *waiver)
		case cur != nil:
			for _, f := range []string{"fixes", "drop-when", "why"} {
				if !fields[f] {
					return fmt.Errorf("%s:%d: override of %s has no %s line", name, cur.Line, cur.Module, f)
				}
			}
			file.Entries = append(file.Entries, *cur)
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if raw[0] != ' ' && raw[0] != '\t' {
			if err := finish(); err != nil {
				return File{}, err
			}
			f := strings.Fields(line)
			switch {
			case len(f) > 0 && f[0] == "go":
				if len(f) != 2 || !goVersion.MatchString(f[1]) {
					return File{}, fmt.Errorf("%s:%d: want `go 1.N.P` (a go line as go.mod writes it), found %q", name, n, line)
				}
				if minor(f[1]) < 23 {
					return File{}, fmt.Errorf("%s:%d: go %s: a raised go line needs go 1.23 or later, the first Go that reads the godebug line keeping upstream's GODEBUG defaults", name, n, f[1])
				}
				if prev, dup := seen["go"]; dup {
					return File{}, fmt.Errorf("%s:%d: a second go line (first on line %d)", name, n, prev)
				}
				seen["go"] = n
				goLine = &GoLine{Version: f[1], Line: n}
				continue
			case len(f) > 0 && f[0] == "waive":
				if len(f) != 2 || !strings.HasPrefix(f[1], "GO-") || !advisoryID.MatchString(f[1]) {
					return File{}, fmt.Errorf("%s:%d: want `waive GO-YYYY-NNNN`, found %q", name, n, line)
				}
				if prev, dup := seen[f[1]]; dup {
					return File{}, fmt.Errorf("%s:%d: %s is waived twice (first on line %d)", name, n, f[1], prev)
				}
				seen[f[1]] = n
				waiver = &Waiver{ID: f[1], Line: n}
				continue
			}
			if len(f) != 2 {
				return File{}, fmt.Errorf("%s:%d: want `MODULE VERSION`, found %q", name, n, line)
			}
			if err := module.Check(f[0], f[1]); err != nil {
				return File{}, fmt.Errorf("%s:%d: %v", name, n, err)
			}
			if semver.Canonical(f[1]) != f[1] || module.IsPseudoVersion(f[1]) {
				return File{}, fmt.Errorf("%s:%d: %s %s: want a released version (vX.Y.Z), not a pseudo-version or a shorthand", name, n, f[0], f[1])
			}
			if prev, dup := seen[f[0]]; dup {
				return File{}, fmt.Errorf("%s:%d: %s is overridden twice (first on line %d)", name, n, f[0], prev)
			}
			seen[f[0]] = n
			cur = &Entry{Module: f[0], Version: f[1], Line: n}
			continue
		}
		key, value, _ := strings.Cut(line, " ")
		value = strings.TrimSpace(value)
		switch {
		case goLine != nil:
			if key != "why" || goLine.Why != "" || value == "" {
				return File{}, fmt.Errorf("%s:%d: go %s: want one non-empty why line, found %q", name, n, goLine.Version, line)
			}
			goLine.Why = value
			continue
		case waiver != nil:
			if err := waiverField(waiver, fields, key, value); err != nil {
				return File{}, fmt.Errorf("%s:%d: waiver of %s: %v", name, n, waiver.ID, err)
			}
			continue
		case cur == nil:
			return File{}, fmt.Errorf("%s:%d: an indented field before any `MODULE VERSION`, `go` or `waive` line", name, n)
		}
		if fields[key] {
			return File{}, fmt.Errorf("%s:%d: %s: a second %s line", name, n, cur.Module, key)
		}
		fields[key] = true
		switch key {
		case "fixes":
			for _, id := range strings.Fields(value) {
				if !advisoryID.MatchString(id) {
					return File{}, fmt.Errorf("%s:%d: %s: %q is not an advisory ID (GO-YYYY-NNNN, CVE-YYYY-NNNN, GHSA-xxxx-xxxx-xxxx)", name, n, cur.Module, id)
				}
				cur.Fixes = append(cur.Fixes, id)
			}
			if !hasGoID(cur.Fixes) {
				return File{}, fmt.Errorf("%s:%d: %s: fixes names no GO- advisory (the Go vulnerability database's ID, which govulncheck reports)", name, n, cur.Module)
			}
		case "drop-when":
			v, ok := strings.CutPrefix(value, dropWhenPrefix)
			if !ok || !semver.IsValid(v) {
				return File{}, fmt.Errorf("%s:%d: %s: want `drop-when %sVERSION`, found %q", name, n, cur.Module, dropWhenPrefix, value)
			}
			if semver.Compare(v, cur.Version) > 0 {
				return File{}, fmt.Errorf("%s:%d: %s: drop-when %s is above the override's own %s: upstream requiring %s already has the fix", name, n, cur.Module, v, cur.Version, cur.Version)
			}
			cur.DropWhen = v
		case "why":
			if value == "" {
				return File{}, fmt.Errorf("%s:%d: %s: an empty why", name, n, cur.Module)
			}
			cur.Why = value
		default:
			return File{}, fmt.Errorf("%s:%d: %s: unknown field %q (want fixes, drop-when, why)", name, n, cur.Module, key)
		}
	}
	if err := sc.Err(); err != nil {
		return File{}, err
	}
	if err := finish(); err != nil {
		return File{}, err
	}
	return file, nil
}

// waiverField reads one indented field of a waiver.
func waiverField(w *Waiver, fields map[string]bool, key, value string) error {
	if value == "" {
		return fmt.Errorf("an empty %s line", key)
	}
	if fields[key] {
		return fmt.Errorf("a second %s line", key)
	}
	fields[key] = true
	switch key {
	case "blocker":
		w.Blocker = value
	case "why":
		w.Why = value
	case "ends-when":
		w.EndsWhen = value
	default:
		return fmt.Errorf("unknown field %q (want blocker, why, ends-when)", key)
	}
	return nil
}

// checkWaiver is the rule a waiver keeps: a reason other than the go line,
// said with a blocker the gate knows, and what ends it.
func checkWaiver(name string, w *Waiver) error {
	at := fmt.Sprintf("%s:%d: waiver of %s", name, w.Line, w.ID)
	if w.Why == "" {
		return fmt.Errorf("%s has no why line", at)
	}
	if _, known := Blockers[w.Blocker]; !known {
		m := goLineReason.FindString(w.Why)
		if w.Blocker == "go-line" {
			m = "blocker go-line"
		}
		if m != "" && (w.Blocker == "" || w.Blocker == "go-line") {
			return fmt.Errorf("%s: its reason is the go line (%q): the go line is no reason to ship an advisory that has a fix, since a godebug default= line (Go 1.23) keeps upstream's GODEBUG defaults whatever the go line says; raise it with a `go` entry and override the module (docs/pipeline.md, \"Dependency overrides\")", at, m)
		}
		if w.Blocker == "" {
			return fmt.Errorf("%s has no blocker line (want one of %s)", at, blockerNames())
		}
		return fmt.Errorf("%s: unknown blocker %q (want one of %s)", at, w.Blocker, blockerNames())
	}
	if w.EndsWhen == "" {
		return fmt.Errorf("%s has no ends-when line (what ends it: a release, an upstream change)", at)
	}
	return nil
}

func blockerNames() string {
	names := make([]string, 0, len(Blockers))
	for b := range Blockers {
		names = append(names, b)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// minor is the N of a go line 1.N.P that goVersion matched.
func minor(v string) int {
	n, _ := strconv.Atoi(strings.Split(v, ".")[1])
	return n
}

func hasGoID(ids []string) bool {
	for _, id := range ids {
		if strings.HasPrefix(id, "GO-") {
			return true
		}
	}
	return false
}

// Load reads the overrides file at path; a missing file is no overrides.
// present says whether the file exists.
func Load(path string) (f File, present bool, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	f, err = Parse(path, data)
	return f, err == nil, err
}

// Waived returns the waivers by advisory ID.
func (f File) Waived() map[string]string {
	m := map[string]string{}
	for _, w := range f.Waivers {
		m[w.ID] = w.Why
	}
	return m
}

// String is the entry as the provenance and the notes print it.
func (e Entry) String() string {
	return e.Module + " " + e.Version + " (fixes " + strings.Join(e.Fixes, " ") + ")"
}
