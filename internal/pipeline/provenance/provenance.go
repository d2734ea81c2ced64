package provenance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileName is the provenance file at a tree's root.
const FileName = "HOLDFAST-PROVENANCE"

// Kind says whether a tree carries holdfast's changes.
type Kind string

const (
	// Patched trees carry the libraries, the overlay and the series.
	Patched Kind = "patched"
	// Pristine trees are upstream's code as released on the patched
	// tree's dependency versions (the series' overrides applied), plus
	// holdfast's regression tests: they differ from the patched tree by
	// holdfast's code only, so a test RED there and GREEN on the patched
	// tree shows what the series' code fixes, and the two builds share
	// every compiled dependency.
	Pristine Kind = "pristine"
	// Released trees are the upstream release exactly as published, its
	// own requirements included: what users run today, for the questions
	// the dependency versions answer (GODEBUG defaults, failures upstream
	// already has, the release notes' vulnerability twins).
	Released Kind = "released"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool { return k == Patched || k == Pristine || k == Released }

// Record is the content of a provenance file.
type Record struct {
	Kind     Kind
	Upstream string
	Module   string
	Version  string
	// Sum is the h1: hash of the pristine module.
	Sum string
	// Revision and HoldfastVersion are set for patched trees only.
	Revision        int
	HoldfastVersion string
	// Series is the patch series folder; SeriesHash covers the ordered
	// patch files, the overlay and the carried libraries: every input that
	// changes the patched binaries.
	Series     string
	SeriesHash string
	Patches    []string
	Carried    []string
	// Overrides are the requirements the series' overrides file moved,
	// one "MODULE FROM => TO (why)" each (internal/pipeline/overrides).
	Overrides []string
	// GoLine is set when the overrides' go entry raised the go line:
	// "FROM => TO (godebug default=go1.N; why)".
	GoLine string
	// TestsHash covers the carried regression tests (both kinds).
	TestsHash string
}

const header = "# Written by holdfast apply: what this tree was made from. Do not edit.\n"

// Marshal renders r in the file format.
func (r Record) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	put := func(key, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%s: %s\n", key, value)
		}
	}
	put("kind", string(r.Kind))
	put("upstream", r.Upstream)
	put("module", r.Module)
	put("version", r.Version)
	put("sum", r.Sum)
	if r.Revision > 0 {
		put("holdfast-revision", strconv.Itoa(r.Revision))
	}
	put("holdfast-version", r.HoldfastVersion)
	put("series", r.Series)
	put("series-hash", r.SeriesHash)
	for _, p := range r.Patches {
		put("patch", p)
	}
	for _, c := range r.Carried {
		put("carried", c)
	}
	for _, o := range r.Overrides {
		put("override", o)
	}
	put("go-line", r.GoLine)
	put("tests-hash", r.TestsHash)
	return b.Bytes()
}

// Parse reads the file format; unknown keys are errors so that a reader
// never silently misses what a newer writer recorded.
func Parse(data []byte) (Record, error) {
	var r Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			return Record{}, fmt.Errorf("%s:%d: want `key: value`", FileName, n)
		}
		switch key {
		case "kind":
			r.Kind = Kind(value)
		case "upstream":
			r.Upstream = value
		case "module":
			r.Module = value
		case "version":
			r.Version = value
		case "sum":
			r.Sum = value
		case "holdfast-revision":
			rev, err := strconv.Atoi(value)
			if err != nil {
				return Record{}, fmt.Errorf("%s:%d: holdfast-revision %q", FileName, n, value)
			}
			r.Revision = rev
		case "holdfast-version":
			r.HoldfastVersion = value
		case "series":
			r.Series = value
		case "series-hash":
			r.SeriesHash = value
		case "patch":
			r.Patches = append(r.Patches, value)
		case "carried":
			r.Carried = append(r.Carried, value)
		case "override":
			r.Overrides = append(r.Overrides, value)
		case "go-line":
			r.GoLine = value
		case "tests-hash":
			r.TestsHash = value
		default:
			return Record{}, fmt.Errorf("%s:%d: unknown key %q", FileName, n, key)
		}
	}
	if !r.Kind.Valid() {
		return Record{}, fmt.Errorf("%s: kind %q is none of %s, %s and %s", FileName, r.Kind, Patched, Pristine, Released)
	}
	return r, sc.Err()
}

// Write writes r into the tree at dir.
func Write(dir string, r Record) error {
	return os.WriteFile(filepath.Join(dir, FileName), r.Marshal(), 0o644)
}

// Read reads the provenance of the tree at dir.
func Read(dir string) (Record, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return Record{}, err
	}
	return Parse(data)
}
