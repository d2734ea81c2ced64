package patchset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
)

// Options say how strictly a patch is matched. The zero value is what the
// apply step uses: every hunk exactly where it says, zero fuzz.
type Options struct {
	// Offset lets a hunk match where its context is found nearest its
	// stated position; the rebase report uses it to tell a moved hunk
	// from a conflict.
	Offset bool
	// Reverse un-applies the patch: a patch that reverse-applies to a
	// pristine tree is already upstream.
	Reverse bool
}

// Tree is a folder that patches are applied to. Applied changes are kept in
// memory, so a patch either applies completely or not at all, until Write.
type Tree struct {
	root    string
	changed map[string]*fileState
}

type fileState struct {
	data    []byte
	mode    fs.FileMode
	deleted bool
}

// NewTree returns a Tree over the folder root.
func NewTree(root string) *Tree {
	return &Tree{root: root, changed: map[string]*fileState{}}
}

func (t *Tree) read(name string) (*fileState, error) {
	if st, ok := t.changed[name]; ok {
		if st.deleted {
			return nil, nil
		}
		return st, nil
	}
	full := filepath.Join(t.root, filepath.FromSlash(name))
	info, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, err
	}
	return &fileState{data: data, mode: info.Mode()}, nil
}

// Result says how a patch fared against a tree.
type Result struct {
	Patch   *Patch
	Options Options
	Files   []FileResult
	changes map[string]*fileState
}

// FileResult says how one file's diff fared.
type FileResult struct {
	Path string
	// Problem is set when the file as a whole does not fit the diff: it
	// is missing, it already exists, or a deletion would leave lines.
	Problem string
	Hunks   []HunkResult
}

// Applied reports whether every file and hunk applied.
func (r *Result) Applied() bool {
	for _, f := range r.Files {
		if f.Problem != "" {
			return false
		}
		for _, h := range f.Hunks {
			if !h.Applied {
				return false
			}
		}
	}
	return true
}

// Moved reports whether any applied hunk matched away from its stated line.
func (r *Result) Moved() bool {
	for _, f := range r.Files {
		for _, h := range f.Hunks {
			if h.Applied && h.Offset != 0 {
				return true
			}
		}
	}
	return false
}

// Err describes every file and hunk that did not apply, each naming the
// patch file, the target file and the hunk; nil if the patch applied.
func (r *Result) Err() error {
	var errs []error
	verb := "apply"
	if r.Options.Reverse {
		verb = "reverse-apply"
	}
	for _, f := range r.Files {
		if f.Problem != "" {
			errs = append(errs, fmt.Errorf("%s: %s: %s", r.Patch.Path, f.Path, f.Problem))
		}
		for _, h := range f.Hunks {
			if h.Applied {
				continue
			}
			msg := fmt.Sprintf("%s: %s: hunk #%d (%s) does not %s: %s", r.Patch.Path, f.Path, h.Index, h.Header, verb, h.Problem)
			if h.Elsewhere {
				msg += fmt.Sprintf("; its context matches %s, so the patch needs a refresh against this version", DescribeOffset(h.Offset))
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errors.Join(errs...)
}

// DescribeOffset says where a hunk matched relative to its stated line,
// e.g. "2 lines further down".
func DescribeOffset(n int) string {
	switch {
	case n == 1:
		return "1 line further down"
	case n == -1:
		return "1 line further up"
	case n > 0:
		return fmt.Sprintf("%d lines further down", n)
	default:
		return fmt.Sprintf("%d lines further up", -n)
	}
}

// Check tries p against the tree (as changed by earlier Apply calls)
// without changing it.
func (t *Tree) Check(p *Patch, o Options) (*Result, error) {
	r := &Result{Patch: p, Options: o, changes: map[string]*fileState{}}
	for _, f := range p.Files {
		fr, st, err := t.checkFile(f, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Path, err)
		}
		r.Files = append(r.Files, fr)
		if st != nil {
			r.changes[fr.Path] = st
		}
	}
	return r, nil
}

func (t *Tree) checkFile(f *gitdiff.File, o Options) (FileResult, *fileState, error) {
	isNew, isDelete := f.IsNew, f.IsDelete
	newMode := f.NewMode
	if o.Reverse {
		isNew, isDelete = isDelete, isNew
		newMode = f.OldMode
	}
	fr := FileResult{Path: Target(f)}
	cur, err := t.read(fr.Path)
	if err != nil {
		return fr, nil, err
	}
	var lines []string
	switch {
	case isNew && cur != nil:
		fr.Problem = "the diff creates this file, but it already exists"
		return fr, nil, nil
	case !isNew && cur == nil:
		fr.Problem = "the file does not exist"
		return fr, nil, nil
	case cur != nil:
		lines = splitLines(cur.data)
	}
	out, hunkResults, ok := applyHunks(lines, hunks(f, o.Reverse), o.Offset)
	fr.Hunks = hunkResults
	if !ok {
		return fr, nil, nil
	}
	if isDelete {
		if len(out) > 0 {
			fr.Problem = fmt.Sprintf("the diff deletes this file, but %d lines would remain", len(out))
			return fr, nil, nil
		}
		return fr, &fileState{deleted: true}, nil
	}
	mode := newMode
	if cur != nil {
		mode = cur.mode
	}
	return fr, &fileState{data: []byte(strings.Join(out, "")), mode: mode}, nil
}

// Commit records the changes of a result that applied.
func (t *Tree) Commit(r *Result) error {
	if !r.Applied() {
		return r.Err()
	}
	for name, st := range r.changes {
		t.changed[name] = st
	}
	return nil
}

// Apply checks p and, if it applies, records its changes.
func (t *Tree) Apply(p *Patch, o Options) (*Result, error) {
	r, err := t.Check(p, o)
	if err != nil {
		return nil, err
	}
	return r, t.Commit(r)
}

// Write writes every recorded change to the folder, in path order.
func (t *Tree) Write() error {
	names := make([]string, 0, len(t.changed))
	for name := range t.changed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := t.changed[name]
		full := filepath.Join(t.root, filepath.FromSlash(name))
		if st.deleted {
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := fscopy.WriteFile(full, st.data, st.mode); err != nil {
			return err
		}
	}
	t.changed = map[string]*fileState{}
	return nil
}

// ApplySeries applies every patch strictly (zero fuzz, stated positions)
// and writes the result; on the first patch that does not apply it writes
// nothing and returns an error naming the patch, file and hunks.
func ApplySeries(root string, series []*Patch) ([]*Result, error) {
	t := NewTree(root)
	var results []*Result
	for _, p := range series {
		r, err := t.Apply(p, Options{})
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, t.Write()
}
