package karmadacp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treebin"
)

// Build says which tree of the pin the binaries come from.
type Build string

const (
	// Patched is holdfast's tree: upstream plus the series.
	Patched Build = "patched"
	// Pristine is upstream's code, on the patched tree's dependency
	// versions (provenance.Pristine).
	Pristine Build = "pristine"
)

// BinDirEnv overrides where `holdfast build` put the shipped binaries
// (<dir>/karmada-<version>[-pristine]/), as for the other suites.
const BinDirEnv = build.BinDirEnv

const upstreamName = "karmada"

// Shipped are the components holdfast ships (pins.txt's build line), found
// where `holdfast build` wrote them: they are the binaries under test, so
// the shipped build and not a rebuild.
var Shipped = []Component{ControllerManager, Search, MetricsAdapter, SchedulerEstimator, Agent}

// ControlPlaneShipped are the Shipped components that run in the control
// plane and hold member clients built from a member's Secret
// (BuildClusterConfig): the ones ControlPlane.Restart restarts. The agent
// runs beside a Pull member (JoinPull), the scheduler estimator beside a
// member too.
var ControlPlaneShipped = []Component{ControllerManager, Search, MetricsAdapter}

func shippedNames() []string {
	names := make([]string, len(Shipped))
	for i, c := range Shipped {
		names[i] = string(c)
	}
	return names
}

// unshipped are the components holdfast does not ship, built by
// internal/pipeline/treebin from the same tree: pins.txt's build line lists
// only binaries whose member clients come from BuildClusterConfig, and these
// three are there only for the shipped ones to run against.
var unshipped = []string{
	"./cmd/aggregated-apiserver=" + string(AggregatedAPIServer),
	"./cmd/scheduler=" + string(Scheduler),
	"./cmd/webhook=" + string(Webhook),
}

// Target is the pinned Karmada release a control plane runs.
type Target struct {
	// Version is the default pin's, e.g. "v1.18.2".
	Version string
	// Tree is the applied tree of the build
	// (_output/trees/karmada-<version>[-pristine]).
	Tree string
	// Binaries are every component's path.
	Binaries Binaries
	// Built says whether EnsureBinaries compiled the unshipped components
	// (false: a cache hit).
	Built bool
}

// EnsureBinaries finds the binaries of build b of pins.txt's default
// Karmada pin under the repository root: the Shipped components as
// `holdfast build --only <Shipped> [--pristine]` wrote them,
// and the unshipped components from internal/pipeline/treebin, built from the
// same tree on first use. log receives the build's progress; nil discards.
func EnsureBinaries(ctx context.Context, root string, b Build, log io.Writer) (Target, error) {
	if b != Patched && b != Pristine {
		return Target{}, fmt.Errorf("karmada build %q: want %s or %s", b, Patched, Pristine)
	}
	built, err := build.LocateDefault(root, upstreamName, b == Pristine)
	if err != nil {
		return Target{}, err
	}
	built.Make = "e2e-karmada-cp"
	t := Target{Version: built.Version, Tree: built.Tree, Binaries: Binaries{}}
	for _, c := range Shipped {
		path, err := built.Binary(string(c))
		if err != nil {
			var missing *build.MissingBinaryError
			if errors.As(err, &missing) {
				// Build them all at once: one link of the shared packages.
				return Target{}, fmt.Errorf("%s binary %s is missing; build it first: make %s (or %s)", b, path, built.Make, built.BuildCommand(shippedNames()...))
			}
			return Target{}, err
		}
		t.Binaries[c] = path
	}
	res, err := treebin.Ensure(ctx, treebin.Request{Root: root, Tree: t.Tree, Upstream: built.Upstream, Packages: unshipped, Log: log})
	if err != nil {
		return Target{}, fmt.Errorf("%s Karmada components: %w", b, err)
	}
	for name, path := range res.Paths {
		t.Binaries[Component(name)] = path
	}
	t.Built = res.Built
	return t, nil
}
