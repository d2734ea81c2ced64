package stage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
)

// StampFile is written at the root of every finished tree.
const StampFile = ".holdfast-stage"

// Outcome says what Ensure did.
type Outcome struct {
	// Reused is true when the existing tree was left as it was.
	Reused bool
	// Reason says why the tree was (re)built, e.g. "inputs changed".
	Reason string
	// TreeHash is the h1: dirhash of the tree's content, stamp excluded.
	TreeHash string
}

// Ensure makes dest a finished tree for the inputs identified by key.
//
// If dest is already a finished tree for key whose content is unchanged, it
// is left alone. Otherwise build fills an empty temporary folder beside dest,
// which is then stamped and renamed to dest, replacing the old tree. If
// build fails, the temporary folder is removed and dest is left as it was.
func Ensure(dest, key string, build func(dir string) error) (Outcome, error) {
	dest = filepath.Clean(dest)
	parent, base := filepath.Split(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Outcome{}, err
	}
	unlock, err := lock(filepath.Join(parent, "."+base+".lock"))
	if err != nil {
		return Outcome{}, fmt.Errorf("locking %s: %w", dest, err)
	}
	defer unlock()

	// Leftovers of a run that was killed: nobody else can be using them
	// while we hold the lock.
	leftovers, _ := filepath.Glob(filepath.Join(parent, "."+base+".partial-*"))
	for _, l := range leftovers {
		if err := os.RemoveAll(l); err != nil {
			return Outcome{}, fmt.Errorf("removing an unfinished tree: %w", err)
		}
	}

	reason, err := check(dest, key)
	if err != nil {
		return Outcome{}, err
	}
	if reason == "" {
		st, err := readStamp(dest)
		return Outcome{Reused: true, TreeHash: st.tree}, err
	}

	tmp, err := os.MkdirTemp(parent, "."+base+".partial-")
	if err != nil {
		return Outcome{}, err
	}
	finished := false
	defer func() {
		if !finished {
			os.RemoveAll(tmp)
		}
	}()
	if err := build(tmp); err != nil {
		return Outcome{}, err
	}
	hash, err := Hash(tmp)
	if err != nil {
		return Outcome{}, err
	}
	if err := writeStamp(tmp, stamp{inputs: key, tree: hash}); err != nil {
		return Outcome{}, err
	}
	if err := replace(dest, tmp); err != nil {
		return Outcome{}, err
	}
	finished = true
	return Outcome{Reason: reason, TreeHash: hash}, nil
}

// check returns why dest must be built, or "" if it can be reused.
func check(dest, key string) (string, error) {
	if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
		return "no tree yet", nil
	} else if err != nil {
		return "", err
	}
	st, err := readStamp(dest)
	if err != nil {
		return "the tree has no readable stamp", nil
	}
	if st.inputs != key {
		return "inputs changed", nil
	}
	hash, err := Hash(dest)
	if err != nil {
		return "", err
	}
	if hash != st.tree {
		return "the tree was modified after it was built", nil
	}
	return "", nil
}

// replace renames tmp to dest, moving an existing dest aside first and
// removing it afterwards.
func replace(dest, tmp string) error {
	old := tmp + ".old"
	hadOld := false
	if err := os.Rename(dest, old); err == nil {
		hadOld = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("moving the old tree aside: %w", err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		if hadOld {
			os.Rename(old, dest)
		}
		return fmt.Errorf("moving the finished tree into place: %w", err)
	}
	if hadOld {
		return os.RemoveAll(old)
	}
	return nil
}

// Hash is the h1: dirhash of the tree's content, the stamp excluded. File
// names are hashed relative to the root, so the hash does not depend on
// where the tree is.
func Hash(root string) (string, error) {
	files, err := fscopy.Files(root)
	if err != nil {
		return "", err
	}
	kept := files[:0]
	for _, f := range files {
		if f != StampFile {
			kept = append(kept, f)
		}
	}
	return dirhash.Hash1(kept, func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(root, filepath.FromSlash(name)))
	})
}

type stamp struct{ inputs, tree string }

func writeStamp(dir string, st stamp) error {
	content := fmt.Sprintf("# Written by holdfast when this tree was finished; do not edit.\ninputs: %s\ntree: %s\n", st.inputs, st.tree)
	return os.WriteFile(filepath.Join(dir, StampFile), []byte(content), 0o644)
}

func readStamp(dir string) (stamp, error) {
	data, err := os.ReadFile(filepath.Join(dir, StampFile))
	if err != nil {
		return stamp{}, err
	}
	var st stamp
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ": ")
		switch key {
		case "inputs":
			st.inputs = value
		case "tree":
			st.tree = value
		}
	}
	if st.inputs == "" || st.tree == "" {
		return stamp{}, fmt.Errorf("%s: incomplete stamp", filepath.Join(dir, StampFile))
	}
	return st, nil
}
