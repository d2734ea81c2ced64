package release

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// CheckVersion accepts a release version as the tags of a Go module are
// written: vMAJOR.MINOR.PATCH with an optional pre-release. Build metadata
// ("+...") is refused because OCI tags and chart versions pushed to OCI
// registries cannot carry a '+'.
func CheckVersion(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("release version is empty: pass VERSION=vX.Y.Z")
	case strings.Contains(v, "+"):
		return fmt.Errorf("release version %q has build metadata ('+'), which OCI tags cannot carry", v)
	case !semver.IsValid(v) || semver.Canonical(v) != v:
		return fmt.Errorf("release version %q is not of the form vX.Y.Z or vX.Y.Z-pre (semver with a leading v)", v)
	}
	return nil
}
