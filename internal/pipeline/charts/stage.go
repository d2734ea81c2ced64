package charts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Stage lays the chart, ready for helm, into dir/<Name> from the patched
// tree of pin and the holdfast repository at root, and returns that folder.
func (c Chart) Stage(dir, root, tree string, pin pins.Pin) (string, error) {
	dst := filepath.Join(dir, c.Name)
	if err := c.stage(dst, root, tree, pin); err != nil {
		return "", fmt.Errorf("staging chart %s for %s %s: %w", c.Name, c.Upstream, pin.Version, err)
	}
	return dst, nil
}

// KarmadaCommonDir is holdfast's stand-in for the `common` library chart
// Karmada's chart depends on, relative to the repository root.
const KarmadaCommonDir = "charts/karmada-common"

// stageKarmada copies the patched tree's chart, sets the image-version
// anchors as upstream's hack/package-helm-chart.sh does for a release, and
// lays the `common` dependency.
func stageKarmada(dst, root, tree string, pin pins.Pin) error {
	src := filepath.Join(tree, "charts", "karmada")
	if _, err := fscopy.Tree(dst, src, fscopy.Options{}); err != nil {
		return err
	}
	values := filepath.Join(dst, "values.yaml")
	data, err := os.ReadFile(values)
	if err != nil {
		return err
	}
	// Unpatched components run upstream's images of the pinned tag; the
	// patched ones holdfast's of the pin's holdfast version.
	for _, a := range []struct{ anchor, value, why string }{
		{"karmadaImageVersion", pin.Version, "upstream's chart"},
		{"holdfastImageVersion", pin.VersionString(), "the series' chart patch (0003-chart-holdfast-images-and-guard-flags)"},
	} {
		if data, err = setAnchor(data, a.anchor, a.value); err != nil {
			return fmt.Errorf("%s: %w; it comes from %s", filepath.Join(src, "values.yaml"), err, a.why)
		}
	}
	if err := fscopy.WriteFile(values, data, 0o644); err != nil {
		return err
	}
	// NoReplace: should upstream ever vendor its dependency, the stand-in
	// must not silently replace it.
	_, err = fscopy.Tree(filepath.Join(dst, "charts", "common"), filepath.Join(root, KarmadaCommonDir), fscopy.Options{NoReplace: true})
	return err
}

// setAnchor sets the value of the top-level YAML anchor line
// "NAME: &NAME VALUE", which must appear exactly once.
func setAnchor(data []byte, name, value string) ([]byte, error) {
	re := regexp.MustCompile(`(?m)^(` + regexp.QuoteMeta(name) + `: &` + regexp.QuoteMeta(name) + ` )\S+$`)
	if n := len(re.FindAllIndex(data, -1)); n != 1 {
		return nil, fmt.Errorf("want one line %q, found %d", name+": &"+name+" <version>", n)
	}
	return re.ReplaceAll(data, []byte("${1}"+value)), nil
}

// WorkerOperatorDir is holdfast's worker-operator chart, relative to the
// repository root.
const WorkerOperatorDir = "charts/worker-operator"

// workerOperatorUpstreamFiles are the files of the worker-operator tree the
// chart reads as they are: controller-gen's RBAC and kubebuilder's
// leader-election role. The CRDs (config/crd/bases/*.yaml) go to crds/.
var workerOperatorUpstreamFiles = []string{
	"config/rbac/role.yaml",
	"config/rbac/leader_election_role.yaml",
}

// stageWorkerOperator copies holdfast's chart and adds upstream's CRDs and
// RBAC rules from the patched tree.
func stageWorkerOperator(dst, root, tree string, pin pins.Pin) error {
	if _, err := fscopy.Tree(dst, filepath.Join(root, WorkerOperatorDir), fscopy.Options{}); err != nil {
		return err
	}
	crds, err := filepath.Glob(filepath.Join(tree, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return err
	}
	if len(crds) == 0 {
		return fmt.Errorf("no CRDs in %s", filepath.Join(tree, "config", "crd", "bases"))
	}
	files := map[string]string{} // destination -> source
	for _, crd := range crds {
		files[filepath.Join(dst, "crds", filepath.Base(crd))] = crd
	}
	for _, rel := range workerOperatorUpstreamFiles {
		files[filepath.Join(dst, filepath.FromSlash(rel))] = filepath.Join(tree, filepath.FromSlash(rel))
	}
	for to, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if _, err := os.Stat(to); err == nil {
			return fmt.Errorf("%s would replace %s in holdfast's chart", from, to)
		}
		if err := fscopy.WriteFile(to, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
