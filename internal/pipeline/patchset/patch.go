package patchset

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Patch is one parsed patch file.
type Patch struct {
	// Path is where the patch was read from, as given; every message about
	// the patch starts with it.
	Path   string
	Header Header
	Files  []*gitdiff.File
}

// Name is the patch file's base name, e.g. 0001-membercred-refreshing-token.patch.
func (p *Patch) Name() string { return filepath.Base(p.Path) }

// Target is the path a file diff changes, relative to the tree root.
func Target(f *gitdiff.File) string {
	if f.IsDelete {
		return f.OldName
	}
	return f.NewName
}

// seriesFileName makes the application order explicit in the file name, as
// EKS Distro and `git format-patch` number theirs.
var seriesFileName = regexp.MustCompile(`^[0-9]{4}-[A-Za-z0-9._-]+\.patch$`)

// LoadSeries parses every *.patch file in dir, in file-name order, which is
// the order they apply in. Other files (a README) are ignored, but a file
// that looks like a misnamed patch (*.diff, a .patch without the NNNN-
// number) is an error rather than silently skipped.
func LoadSeries(dir string) ([]*Patch, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading patch series: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".patch") && seriesFileName.MatchString(name) && e.Type().IsRegular():
			names = append(names, name)
		case strings.HasSuffix(name, ".patch"), strings.HasSuffix(name, ".diff"):
			return nil, fmt.Errorf("%s: a series file must be a regular file named NNNN-short-name.patch", filepath.Join(dir, name))
		}
	}
	sort.Strings(names)
	var series []*Patch
	for _, name := range names {
		p, err := Load(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		series = append(series, p)
	}
	return series, nil
}

// Load reads and parses one patch file.
func Load(file string) (*Patch, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Parse parses a patch file's content; name is used in messages.
func Parse(name string, data []byte) (*Patch, error) {
	lines := strings.SplitAfter(string(data), "\n")
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimSuffix(l, "\n")
	}
	h, n, err := parseHeader(name, trimmed)
	if err != nil {
		return nil, err
	}
	diff := strings.Join(lines[n:], "")
	files, preamble, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, fmt.Errorf("%s: diff (from line %d): %w", name, n+1, err)
	}
	if strings.TrimSpace(preamble) != "" {
		first, _, _ := strings.Cut(strings.TrimSpace(preamble), "\n")
		return nil, fmt.Errorf("%s:%d: text between the header and the first diff (%q); put it in Description", name, n+1, first)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no diff after the %q line", name, SeparatorLine)
	}
	p := &Patch{Path: name, Header: h, Files: files}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// check refuses what strict text application cannot honour.
func (p *Patch) check() error {
	seen := map[string]bool{}
	for _, f := range p.Files {
		target := Target(f)
		if err := checkPath(target); err != nil {
			return fmt.Errorf("%s: %w", p.Path, err)
		}
		switch {
		case f.IsBinary:
			return fmt.Errorf("%s: %s: binary diffs are not supported", p.Path, target)
		case f.IsRename || f.IsCopy:
			return fmt.Errorf("%s: %s: renames and copies are not supported; write them as a deletion and a new file", p.Path, target)
		case !f.IsNew && !f.IsDelete && f.OldName != f.NewName:
			return fmt.Errorf("%s: diff changes %s into %s; both names must be the same", p.Path, f.OldName, f.NewName)
		case !f.IsNew && !f.IsDelete && f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode:
			return fmt.Errorf("%s: %s: mode changes are not supported", p.Path, target)
		case !f.IsNew && len(f.TextFragments) == 0:
			return fmt.Errorf("%s: %s: diff has no hunks", p.Path, target)
		}
		if seen[target] {
			return fmt.Errorf("%s: %s appears twice; put all its hunks in one diff", p.Path, target)
		}
		seen[target] = true
		for i, frag := range f.TextFragments {
			if err := frag.Validate(); err != nil {
				return fmt.Errorf("%s: %s: hunk #%d (%s): %w", p.Path, target, i+1, strings.TrimSpace(frag.Header()), err)
			}
		}
	}
	return nil
}

func checkPath(p string) error {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("diff path %q must be a clean path inside the tree", p)
	}
	return nil
}
