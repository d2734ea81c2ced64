package karmadacp

import "slices"

// UnshippedPackages are the treebin packages (pins.txt form, PKG=BINARY)
// of the components holdfast does not ship. internal/harness/standin builds
// their stand-in images from the same request, so that both share one treebin
// cache folder per tree.
func UnshippedPackages() []string { return slices.Clone(unshipped) }
