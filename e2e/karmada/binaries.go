package karmada

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/holdfast-dist/holdfast/internal/build"
)

// BinDirEnv overrides where the binaries are (internal/build.BinDirEnv).
const BinDirEnv = build.BinDirEnv

// upstreamName is Karmada's name in pins.txt.
const upstreamName = "karmada"

// controllerManagerBinary is the binary pins.txt builds from
// ./cmd/controller-manager.
const controllerManagerBinary = "karmada-controller-manager"

// Build says which of the two builds of one pin a binary is.
type Build string

const (
	// Patched is holdfast's build: upstream plus the patch series.
	Patched Build = "patched"
	// Pristine is upstream as released, built the same way.
	Pristine Build = "pristine"
)

// Target is the Karmada release the suite tests: the default pin of
// pins.txt, and where its tree and binaries are.
type Target struct {
	// Version is the upstream version, e.g. "v1.18.2".
	Version string
	// Tree is the patched source tree (_output/trees/karmada-<version>),
	// read for CRDs and API types, which the series does not change.
	Tree              string
	patched, pristine build.Built
}

// LoadTarget reads pins.txt under root for Karmada's default pin.
func LoadTarget(root string) (Target, error) {
	patched, err := build.LocateDefault(root, upstreamName, false)
	if err != nil {
		return Target{}, err
	}
	pristine, err := build.LocateDefault(root, upstreamName, true)
	if err != nil {
		return Target{}, err
	}
	return Target{Version: patched.Version, Tree: patched.Tree, patched: patched, pristine: pristine}, nil
}

// ControllerManager returns the path of the karmada-controller-manager of
// build b, or an error that says how to build it.
func (t Target) ControllerManager(b Build) (string, error) {
	if b == Pristine {
		return t.pristine.Binary(controllerManagerBinary)
	}
	return t.patched.Binary(controllerManagerBinary)
}

// CheckTree reports whether the Karmada tree the suite reads CRDs from is
// there.
func (t Target) CheckTree() error {
	if _, err := os.Stat(filepath.Join(t.Tree, "go.mod")); err != nil {
		return fmt.Errorf("karmada tree %s is missing (%v); build it first: make binaries (or %s)", t.Tree, err, t.patched.BuildCommand())
	}
	return nil
}

// The fields of what Karmada's `version` subcommand prints:
// `<cmd> version: version.Info{GitVersion:"v1.18.2", GitCommit:"...", ...}`.
var (
	gitVersionField = regexp.MustCompile(`GitVersion:"([^"]*)"`)
	gitCommitField  = regexp.MustCompile(`GitCommit:"([^"]*)"`)
)

// ParseKarmadaVersion extracts "GitVersion (GitCommit)" from the output of
// a Karmada binary's `version` subcommand; the commit is left out when the
// binary has none (a pristine build sets only upstream's version).
func ParseKarmadaVersion(out string) (string, error) {
	m := gitVersionField.FindStringSubmatch(out)
	if m == nil || m[1] == "" {
		return "", fmt.Errorf("no GitVersion in version output %q", out)
	}
	if c := gitCommitField.FindStringSubmatch(out); c != nil && c[1] != "" {
		return fmt.Sprintf("%s (%s)", m[1], c[1]), nil
	}
	return m[1], nil
}

// BinaryVersion runs `path version` (Karmada binaries have a version
// subcommand, not a --version flag) and parses what it prints.
func BinaryVersion(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w: %s", path, err, out)
	}
	v, err := ParseKarmadaVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
