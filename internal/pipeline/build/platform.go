package build

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Platform is a cross-compilation target, in the go command's terms.
type Platform struct {
	OS, Arch string
}

// DefaultPlatforms are the targets images are built for: what Karmada and
// KubeSlice publish their own images for.
var DefaultPlatforms = []Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}}

// String is the OCI and Docker spelling, os/arch.
func (p Platform) String() string { return p.OS + "/" + p.Arch }

func (p Platform) goEnv() string {
	if p == (Platform{}) {
		return ""
	}
	return "GOOS=" + p.OS + " GOARCH=" + p.Arch + " "
}

// forLog names the target in a progress line: nothing for the host.
func (p Platform) forLog() string {
	if p == (Platform{}) {
		return ""
	}
	return " for " + p.String()
}

// ParsePlatform reads os/arch, e.g. linux/arm64. A variant (linux/arm/v7)
// is refused: the go command takes it from GOARM, which no pin needs.
func ParsePlatform(s string) (Platform, error) {
	goos, goarch, ok := strings.Cut(s, "/")
	if !ok || goos == "" || goarch == "" || strings.ContainsAny(goarch, "/ \t") || strings.ContainsAny(goos, " \t") {
		return Platform{}, fmt.Errorf("platform %q: want os/arch, e.g. linux/arm64", s)
	}
	return Platform{OS: goos, Arch: goarch}, nil
}

// ParsePlatforms reads a comma-separated list, e.g. linux/amd64,linux/arm64.
func ParsePlatforms(s string) ([]Platform, error) {
	var ps []Platform
	seen := map[Platform]bool{}
	for _, f := range strings.Split(s, ",") {
		p, err := ParsePlatform(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, fmt.Errorf("platform %s is listed twice", p)
		}
		seen[p] = true
		ps = append(ps, p)
	}
	return ps, nil
}

// PlatformDir is the folder a pin's binaries for p are written to:
// Out/<upstream>-<version>-platforms/<os>/<arch>/, the layout Karmada's own
// buildx.Dockerfile copies from (COPY ${TARGETPLATFORM}/${BINARY}), so
// images/*/Dockerfile can use that folder as its build context.
func PlatformDir(out string, up *pins.Upstream, version string, p Platform) string {
	return platformDir(Dir(out, up, version), p)
}

func platformDir(hostDir string, p Platform) string {
	return filepath.Join(hostDir+"-platforms", p.OS, p.Arch)
}
