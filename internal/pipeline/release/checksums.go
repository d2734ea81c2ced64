package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// ChecksumsFile is the name of the checksum list at the release root.
const ChecksumsFile = "CHECKSUMS"

// Checksums returns the sha256 of every regular file under dir except
// CHECKSUMS itself, in the `sha256sum` format ("<hex>  <path>"), sorted by
// path so the file is the same for the same content. A symlink or other
// special file is an error: a release is plain files.
func Checksums(dir string) ([]byte, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file; a release holds plain files only", rel)
		case rel == ChecksumsFile:
			return nil
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		sum, err := sha256File(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, p)
	}
	return b.Bytes(), nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
