package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/internal/pins"
)

// upstreamName is the worker-operator's name in pins.txt and on holdfast's
// command line.
const upstreamName = "workeroperator"

// binDirEnv names a folder to use instead of <root>/_output/bin, for running
// the suite against binaries built elsewhere (a release's, say). Inside it
// the layout is the build step's: <upstream>-<version>[-pristine]/<binary>.
const binDirEnv = "HOLDFAST_E2E_BIN"

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
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		return workerBinary{}, err
	}
	up, err := f.Upstream(upstreamName)
	if err != nil {
		return workerBinary{}, err
	}
	var pin *pins.Pin
	for i := range up.Pins {
		if up.Pins[i].Default {
			pin = &up.Pins[i]
		}
	}
	if pin == nil {
		return workerBinary{}, fmt.Errorf("%s: upstream %s has no default pin", f.Name, upstreamName)
	}
	binDir := filepath.Join(root, "_output", "bin")
	if d := os.Getenv(binDirEnv); d != "" {
		binDir = d
	}
	folder := upstreamName + "-" + pin.Version
	flag := ""
	if pristine {
		folder += "-pristine"
		flag = " --pristine"
	}
	path := filepath.Join(binDir, folder, up.BinaryName("."))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return workerBinary{}, fmt.Errorf("no worker-operator binary at %s; build them first: make binaries (or go run ./cmd/holdfast build --upstream %s%s)",
			path, upstreamName, flag)
	} else if err != nil {
		return workerBinary{}, err
	}
	return workerBinary{Path: path, Version: pin.Version, Pristine: pristine}, nil
}
