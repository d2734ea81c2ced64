package toolcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// rootMarker is the file that marks the repository root: pins.txt is the one
// file every holdfast command reads, so it cannot move without everything
// else noticing.
const rootMarker = "pins.txt"

// Root finds the repository root (the directory holding pins.txt) from the
// working directory upward. Tests run in their package's directory, so this
// is how a suite finds .cache, _output and the built binaries.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	return rootFrom(wd)
}

func rootFrom(dir string) (string, error) {
	for d := dir; ; {
		_, err := os.Stat(filepath.Join(d, rootMarker))
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("finding the repository root: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s in %s or any parent: run from inside the holdfast repository", rootMarker, dir)
		}
		d = parent
	}
}
