package build

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/module"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// VerifyBinaries checks that dir holds every binary of up as Build writes
// it for pin: a Go binary compiled by Toolchain, static (CGO_ENABLED=0),
// stamped with the pin's holdfast version and the short form of seriesH1,
// all for one platform, which it returns. A release must not ship a
// binary left from another pin, another series or a pristine build.
//
// The stamps are looked for in the binary's bytes, where the linker's -X
// puts them: builds use -trimpath, and the go command then leaves -ldflags
// out of the build information.
func VerifyBinaries(dir string, up *pins.Upstream, pin pins.Pin, seriesH1 string) (Platform, error) {
	version := pin.VersionString()
	series := ShortSeriesHash(seriesH1)
	var platform Platform
	for _, pkg := range up.Build {
		name := up.BinaryName(pkg)
		path := filepath.Join(dir, name)
		info, err := buildinfo.ReadFile(path)
		if err != nil {
			return Platform{}, fmt.Errorf("binary %s: not a Go binary (%w)", path, err)
		}
		if err := checkMainModule(info, up.Module, pin.Version); err != nil {
			return Platform{}, fmt.Errorf("binary %s: %w", path, err)
		}
		if info.GoVersion != Toolchain {
			return Platform{}, fmt.Errorf("binary %s: built with %s, not %s, the toolchain holdfast ships with: rebuild it (holdfast build)", path, info.GoVersion, Toolchain)
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" {
			return Platform{}, fmt.Errorf("binary %s: built with CGO_ENABLED=%q, not a static build", path, settings["CGO_ENABLED"])
		}
		p := Platform{OS: settings["GOOS"], Arch: settings["GOARCH"]}
		if platform == (Platform{}) {
			platform = p
		} else if p != platform {
			return Platform{}, fmt.Errorf("binary %s is for %s, the others for %s", path, p, platform)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return Platform{}, err
		}
		if !bytes.Contains(data, []byte(version)) {
			return Platform{}, fmt.Errorf("binary %s does not carry version %s: it is of another pin, or pristine", path, version)
		}
		if !bytes.Contains(data, []byte(series)) {
			return Platform{}, fmt.Errorf("binary %s does not carry series %s: it was built from another patch series", path, series)
		}
	}
	return platform, nil
}

// checkMainModule checks that the build information names the upstream
// module at a pseudo-version after the pin's tag (stampedCheckout), which
// scanners order after the pin: not "(devel)", which they skip, nor the tag
// itself, which is the pristine build's.
func checkMainModule(info *buildinfo.BuildInfo, modulePath, tag string) error {
	if info.Main.Path != modulePath {
		return fmt.Errorf("main module is %q, not %s", info.Main.Path, modulePath)
	}
	v := info.Main.Version
	if !module.IsPseudoVersion(v) {
		return fmt.Errorf("main module %s is at %s, not at a pseudo-version after %s: scanners would not match it to %s's advisories", modulePath, v, tag, modulePath)
	}
	if base, err := module.PseudoVersionBase(v); err != nil || base != tag {
		return fmt.Errorf("main module %s is at %s, a version after %q, not after %s", modulePath, v, base, tag)
	}
	return nil
}
