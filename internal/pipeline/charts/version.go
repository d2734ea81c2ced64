package charts

import (
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// ChartVersion is the chart version of a pin's chart: the holdfast version
// the binaries report without its "v", e.g. 1.18.2-holdfast.3.
//
// Why this form: an OCI tag cannot hold SemVer's "+", so build metadata
// (1.18.2+holdfast.2, the "right" SemVer for a rebuild) is out; helm would
// push it as 1.18.2_holdfast.2 and consumers would see two spellings. A
// pre-release suffix keeps the upstream version readable first, orders
// holdfast's revisions correctly (holdfast.2 < holdfast.10: numeric
// identifiers compare as numbers) and after every older upstream version,
// and is what other downstream builds put in tags (k3s's v1.30.4-k3s1,
// EKS-D's v1.30.4-eks-1-30-18). Its cost: SemVer ranges and helm without
// --version skip pre-releases, so users name the version exactly (a
// patched distribution should be pinned anyway) or write a range with a
// pre-release floor (">=1.18.2-0"). It sorts below upstream's own 1.18.2,
// which never shares a repository with it. Karmada tags its own charts
// "v1.18.2"; the "v" is dropped because Helm documents chart versions as
// SemVer 2, which has none.
func ChartVersion(p pins.Pin) string {
	return strings.TrimPrefix(p.VersionString(), "v")
}

// AppVersion is a chart's appVersion: exactly the version its binaries
// report (`--version`, holdfast_build_info), e.g. v1.18.2-holdfast.3.
func AppVersion(p pins.Pin) string {
	return p.VersionString()
}
