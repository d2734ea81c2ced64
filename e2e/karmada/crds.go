package karmada

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// crdBasesDir is where a Karmada tree keeps its own CRDs as controller-gen
// writes them. The chart's kustomization also patches conversion webhooks
// into two of them (_crds/patches); the bases are used as they are because
// no karmada-webhook runs here and the controllers under test only use the
// storage version.
const crdBasesDir = "charts/karmada/_crds/bases"

// KarmadaCRDFiles lists the CRD files of a Karmada tree, sorted so that the
// install order, and its log, are the same on every run.
func KarmadaCRDFiles(tree string) ([]string, error) {
	base := filepath.Join(tree, crdBasesDir)
	var files []string
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing Karmada CRDs: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs under %s", base)
	}
	sort.Strings(files)
	return files, nil
}
