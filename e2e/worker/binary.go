package worker

import (
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
)

// upstreamName is the worker-operator's name in pins.txt and on holdfast's
// command line.
const upstreamName = "workeroperator"

// workerBinary is one worker-operator binary under test.
type workerBinary struct {
	Path string
	// Version is the upstream version of the default pin, e.g. "v1.6.4".
	Version string
	// Pristine is true for upstream's code without holdfast's series.
	Pristine bool
}

// findWorkerBinary locates the default pin's worker-operator as `holdfast
// build --upstream workeroperator [--pristine]` leaves it. A missing binary
// is an error that says how to make it: the suite fails rather than skips,
// so a forgotten build cannot pass as a green run.
func findWorkerBinary(root string, pristine bool) (workerBinary, error) {
	b, err := build.LocateDefault(root, upstreamName, pristine)
	if err != nil {
		return workerBinary{}, err
	}
	path, err := b.Binary(b.Upstream.BinaryName("."))
	if err != nil {
		return workerBinary{}, err
	}
	return workerBinary{Path: path, Version: b.Version, Pristine: pristine}, nil
}
