package fscopy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// ErrExists is wrapped by Tree's error when NoReplace meets an existing file.
var ErrExists = errors.New("destination exists")

// Options tune Tree.
type Options struct {
	// NoReplace refuses to overwrite a file that already exists in the
	// destination; the error names both paths.
	NoReplace bool
	// Transform, if set, rewrites each file's content; rel is the
	// slash-separated path below the source root.
	Transform func(rel string, data []byte) ([]byte, error)
	// Skip, if set, leaves out each file for which it returns true; rel is
	// the slash-separated path below the source root.
	Skip func(rel string) bool
}

// Tree copies every regular file below src to the same relative path below
// dst, creating folders as needed, and returns the slash-separated relative
// paths it wrote, sorted.
func Tree(dst, src string, opts Options) ([]string, error) {
	var written []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file (%s); only files and folders are copied", path, d.Type())
		}
		if opts.Skip != nil && opts.Skip(filepath.ToSlash(rel)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if opts.NoReplace {
			if _, err := os.Lstat(target); err == nil {
				return fmt.Errorf("%s would replace %s: %w", path, target, ErrExists)
			} else if !os.IsNotExist(err) {
				return err
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if opts.Transform != nil {
			if data, err = opts.Transform(filepath.ToSlash(rel), data); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if err := WriteFile(target, data, info.Mode()); err != nil {
			return err
		}
		written = append(written, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(written)
	return written, nil
}

// WriteFile writes data to path with an owner-writable mode derived from
// like: 0755 if like has any execute bit, else 0644. An existing read-only
// file is replaced, not refused.
func WriteFile(path string, data []byte, like fs.FileMode) error {
	mode := fs.FileMode(0o644)
	if like&0o111 != 0 {
		mode = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// Remove first: os.WriteFile keeps an existing file's mode and cannot
	// open a read-only one for writing.
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	// The umask may have taken bits away; the modes above are the contract.
	return os.Chmod(path, mode)
}

// Files lists the regular files below root as sorted slash-separated
// relative paths, refusing anything that is neither a file nor a folder.
// A missing root is an empty list: optional inputs (an upstream without an
// overlay) need no placeholder folder.
func Files(root string) ([]string, error) {
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return nil, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%s)", path, d.Type())
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}
