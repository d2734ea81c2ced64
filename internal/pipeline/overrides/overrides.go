package overrides

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
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

// Waiver excuses a reachable advisory with a fixed version that no entry
// can take (the fixed version needs a newer go line, or breaks upstream),
// so that the release gate lets it through; it ships in the VEX as
// affected, with the reason.
type Waiver struct {
	ID   string
	Why  string
	Line int
}

// File is a parsed overrides file.
type File struct {
	Entries []Entry
	Waivers []Waiver
}

var advisoryID = regexp.MustCompile(`^(GO-\d{4}-\d{4,}|CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3})$`)

const dropWhenPrefix = "upstream requires >= "

// Parse reads an overrides file. The format is a module line, then
// indented fields:
//
//	golang.org/x/net v0.38.0
//		fixes GO-2025-3595 CVE-2025-22872
//		drop-when upstream requires >= v0.38.0
//		why smallest fixed version; x/net tags minors only
//
// and waivers, a `waive ID` line with one indented why:
//
//	waive GO-2026-6603
//		why fixed only in golang.org/x/net v0.60.0, which needs go 1.26
//
// Comments (#) and blank lines are ignored. Every field is required once;
// anything else is an error naming the line.
func Parse(name string, data []byte) (File, error) {
	var entries []Entry
	var waivers []Waiver
	seen := map[string]int{}
	var cur *Entry
	var waiver *Waiver
	fields := map[string]bool{}
	finish := func() error {
		if waiver != nil {
			if waiver.Why == "" {
				return fmt.Errorf("%s:%d: waiver of %s has no why line", name, waiver.Line, waiver.ID)
			}
			waivers = append(waivers, *waiver)
			waiver, fields = nil, map[string]bool{}
			return nil
		}
		if cur == nil {
			return nil
		}
		for _, f := range []string{"fixes", "drop-when", "why"} {
			if !fields[f] {
				return fmt.Errorf("%s:%d: override of %s has no %s line", name, cur.Line, cur.Module, f)
			}
		}
		entries = append(entries, *cur)
		cur, fields = nil, map[string]bool{}
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
			if len(f) > 0 && f[0] == "waive" {
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
		if waiver != nil {
			if key != "why" || waiver.Why != "" || value == "" {
				return File{}, fmt.Errorf("%s:%d: waiver of %s: want one non-empty why line, found %q", name, n, waiver.ID, line)
			}
			waiver.Why = value
			continue
		}
		if cur == nil {
			return File{}, fmt.Errorf("%s:%d: an indented field before any `MODULE VERSION` line", name, n)
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
	return File{Entries: entries, Waivers: waivers}, nil
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
