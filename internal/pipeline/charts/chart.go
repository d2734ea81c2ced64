package charts

import (
	"fmt"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Chart is one chart holdfast ships.
type Chart struct {
	// Name is the chart's name: its folder, its archive's prefix and its
	// OCI repository's last element.
	Name string
	// Upstream is the pins.txt upstream whose default pin the chart deploys.
	Upstream string
	// stage lays the chart into dst from the pin's patched tree and the
	// holdfast repository.
	stage func(dst, root, tree string, pin pins.Pin) error
}

// Charts are the charts holdfast ships, in build order.
var Charts = []Chart{
	{Name: "karmada", Upstream: "karmada", stage: stageKarmada},
	{Name: "worker-operator", Upstream: "workeroperator", stage: stageWorkerOperator},
}

// Package is one packaged chart.
type Package struct {
	Chart      Chart
	Pin        pins.Pin
	Version    string // ChartVersion(Pin)
	AppVersion string // AppVersion(Pin)
	// Path is the archive, <out>/<name>-<version>.tgz (helm's own naming).
	Path string
}

// Expected lists the package of every chart for the default pins of f,
// with Path under out; Build writes exactly these and Push expects them.
func Expected(f *pins.File, out string) ([]Package, error) {
	var pkgs []Package
	for _, c := range Charts {
		up, err := f.Upstream(c.Upstream)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Name, err)
		}
		pin, err := up.Pin("")
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Name, err)
		}
		pkgs = append(pkgs, Package{
			Chart:      c,
			Pin:        pin,
			Version:    ChartVersion(pin),
			AppVersion: AppVersion(pin),
			Path:       archivePath(out, c.Name, ChartVersion(pin)),
		})
	}
	return pkgs, nil
}

// archivePath is where `helm package -d dir` writes a chart.
func archivePath(dir, name, version string) string {
	return filepath.Join(dir, name+"-"+version+".tgz")
}
