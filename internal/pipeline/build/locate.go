package build

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// BinDirEnv names the environment variable that overrides the folder
// holding the built binaries' <upstream>-<version>[-pristine] folders (by
// default <root>/_output/bin, where `holdfast build` writes them): for
// running the suites against binaries built elsewhere, a release's say.
const BinDirEnv = "HOLDFAST_E2E_BIN"

// Built is one build of an upstream's default pin as `holdfast build
// --upstream <name> [--pristine]` leaves it: the applied tree it was built
// from and the folder its binaries are in. The suites run these binaries
// and no rebuild, so what they prove is what ships.
type Built struct {
	Upstream *pins.Upstream
	// Version is the default pin's upstream version, e.g. "v1.18.2".
	Version string
	// Pristine is true for the pristine twin (upstream's code on the
	// series' dependency versions), built the same way.
	Pristine bool
	// Tree is the applied tree: _output/trees/<name>-<version>[-pristine].
	Tree string
	// Dir is <bin>/<name>-<version>[-pristine].
	Dir string
	// Make is the make target a missing binary's error names first
	// (LocateDefault: "binaries"); a suite that builds its own sets its.
	Make string
}

// LocateDefault reads pins.txt under root for upstream's default pin and
// says where its patched (or pristine) build is. It checks nothing on
// disk; Binary does.
func LocateDefault(root, upstream string, pristine bool) (Built, error) {
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		return Built{}, err
	}
	up, err := f.Upstream(upstream)
	if err != nil {
		return Built{}, err
	}
	pin, err := up.Pin("")
	if err != nil {
		return Built{}, err
	}
	folder := up.Name + "-" + pin.Version
	if pristine {
		folder += "-pristine"
	}
	binDir := os.Getenv(BinDirEnv)
	if binDir == "" {
		binDir = filepath.Join(root, "_output", "bin")
	}
	return Built{
		Upstream: up,
		Version:  pin.Version,
		Pristine: pristine,
		Tree:     filepath.Join(root, "_output", "trees", folder),
		Dir:      filepath.Join(binDir, folder),
		Make:     "binaries",
	}, nil
}

// Kind is "pristine" or "patched".
func (b Built) Kind() string {
	if b.Pristine {
		return "pristine"
	}
	return "patched"
}

// Binary returns the path of the binary name of this build. A missing
// binary is an error that says how to build it: a suite fails rather than
// skips, so a forgotten build cannot pass as a green run.
func (b Built) Binary(name string) (string, error) {
	path := filepath.Join(b.Dir, name)
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", &MissingBinaryError{Path: path, Kind: b.Kind(), Command: "make " + b.Make + " (or " + b.BuildCommand(name) + ")"}
	case err != nil:
		return "", fmt.Errorf("%s binary %s: %w", b.Kind(), path, err)
	}
	return path, nil
}

// BuildCommand is the command that builds names of this build.
func (b Built) BuildCommand(names ...string) string {
	cmd := "go run ./cmd/holdfast build --upstream " + b.Upstream.Name
	if len(names) > 0 {
		cmd += " --only " + strings.Join(names, ",")
	}
	if b.Pristine {
		cmd += " --pristine"
	}
	return cmd
}

// MissingBinaryError is a build's binary that is not there.
type MissingBinaryError struct {
	Path, Kind string
	// Command says how to build it.
	Command string
}

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s binary %s is missing; build it first: %s", e.Kind, e.Path, e.Command)
}
