package charts

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// DefaultOut is where chart archives go unless told otherwise; _output/ is
// ignored by git.
const DefaultOut = "_output/charts"

// Options say where the charts come from and where they go.
type Options struct {
	// Pins is the parsed pins.txt; every chart deploys its upstream's
	// default pin.
	Pins *pins.File
	// Trees makes the patched trees, or finds them up to date; its Root is
	// the holdfast repository the charts are read from.
	Trees pipeline.Config
	// Out receives <name>-<version>.tgz. It is replaced whole, so it holds
	// exactly the current charts and Push cannot pick up a stale one.
	Out  string
	Helm Helm
	// Images is where `images build` wrote the OCI layouts
	// (_output/images). When the layouts of a chart's images are there,
	// the packaged chart defaults to their index digests; when none are,
	// it keeps the tags (a developer's build). Empty: tags, whatever is
	// built.
	Images string
	// ModTime is every archive entry's time (see normalizeArchive).
	ModTime time.Time
	// Log receives one line per chart; nil discards.
	Log io.Writer
}

// Build stages and packages every chart in Charts. It writes into a hidden
// folder beside Out and renames it into place when all are packaged, so a
// failure leaves the previous charts as they were.
func Build(ctx context.Context, o Options) ([]Package, error) {
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	archives := filepath.Join(work, "archives")
	pkgs, err := Expected(o.Pins, archives)
	if err != nil {
		return nil, err
	}
	for i, p := range pkgs {
		up, err := o.Pins.Upstream(p.Chart.Upstream)
		if err != nil {
			return nil, err
		}
		tree, err := o.Trees.Build(ctx, up, p.Pin, provenance.Patched)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
		}
		dir, err := p.Chart.Stage(filepath.Join(work, "stage"), o.Trees.Root, tree.Dir, p.Pin)
		if err != nil {
			return nil, err
		}
		pinned := "image tags"
		if o.Images != "" {
			digests, err := imageDigests(o.Images, up, p.Pin)
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
			}
			if digests == nil {
				pinned = "image tags (no images in " + o.Images + ")"
			} else {
				if err := SetImageDigests(dir, digests); err != nil {
					return nil, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
				}
				pinned = "image digests from " + o.Images
			}
		}
		path, err := o.Helm.Package(ctx, dir, p.Version, p.AppVersion, archives)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
		}
		if err := normalizeArchive(path, o.ModTime); err != nil {
			return nil, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
		}
		pkgs[i].Path = filepath.Join(out, filepath.Base(path))
		if o.Log != nil {
			fmt.Fprintf(o.Log, "chart %s %s (appVersion %s) from %s, %s\n", p.Chart.Name, p.Version, p.AppVersion, tree.Dir, pinned)
		}
	}
	if err := replaceDir(archives, out); err != nil {
		return nil, err
	}
	return pkgs, nil
}

// replaceDir moves dir to dest, setting any previous dest aside first: a
// directory cannot be renamed over a non-empty one.
func replaceDir(dir, dest string) error {
	old := dir + ".old"
	if err := os.Rename(dest, old); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(dir, dest); err != nil {
		_ = os.Rename(old, dest) // put the previous charts back
		return err
	}
	return os.RemoveAll(old)
}

// CheckPush checks what Push needs before anything runs helm (which
// `holdfast charts push` may first have to build, minutes on a cold cache):
// a registry without credentials in it and every archive Build writes to out
// for the default pins of f. It returns those packages.
func CheckPush(f *pins.File, out, registry string) ([]Package, error) {
	if err := checkRegistry(registry); err != nil {
		return nil, err
	}
	pkgs, err := Expected(f, out)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		if _, err := os.Stat(p.Path); err != nil {
			return nil, fmt.Errorf("no chart archive %s for %s %s: build the charts first (holdfast charts build)", p.Path, p.Chart.Upstream, p.Pin.Version)
		}
	}
	return pkgs, nil
}

// Push pushes the packages Build wrote to out (for the default pins of f)
// to registry, in Charts order, and stops at the first failure.
func Push(ctx context.Context, h Helm, f *pins.File, out, registry string, plainHTTP bool) ([]Pushed, error) {
	pkgs, err := CheckPush(f, out, registry)
	if err != nil {
		return nil, err
	}
	var pushed []Pushed
	for _, p := range pkgs {
		r, err := h.Push(ctx, p, registry, plainHTTP)
		if err != nil {
			return pushed, fmt.Errorf("chart %s: %w", p.Chart.Name, err)
		}
		pushed = append(pushed, r)
	}
	return pushed, nil
}
