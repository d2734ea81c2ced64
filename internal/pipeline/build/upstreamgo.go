package build

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// ImpliedGo is the Go release a go.mod go line names ("1.25.10" is
// go1.25.10; "1.24" is go1.24.0, the first release of that line, as the go
// command reads a two-part go line since Go 1.21).
func ImpliedGo(goLine string) string {
	if strings.Count(goLine, ".") == 1 {
		goLine += ".0"
	}
	return "go" + goLine
}

// UpstreamGoLine reads the go line of mod@version's go.mod from the module
// cache, where fetching the pin put it (go mod download verifies it against
// the checksum database).
func UpstreamGoLine(mod, version string) (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	esc, err := module.EscapePath(mod)
	if err != nil {
		return "", err
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "cache", "download", filepath.FromSlash(esc), "@v", version+".mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("go.mod of %s@%s: %w (holdfast fetch first)", mod, version, err)
	}
	f, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return "", err
	}
	if f.Go == nil {
		return "", fmt.Errorf("go.mod of %s@%s has no go line", mod, version)
	}
	return f.Go.Version, nil
}

// PristineGoNote is the line the side-by-side table carries for one pin's
// pristine twins: which Go upstream's go line implies and which Go built
// them, read from the binaries. `make upstream-go-twins` builds them with
// the implied release (UpstreamGo); twins built with another one (a machine
// that cannot fetch it, a stand-in given by hand) must not pass for
// upstream's build, so the table names both.
func PristineGoNote(name, mod, version string, bins []string) (string, error) {
	want := "an unknown Go (its go.mod is not in the module cache)"
	if line, err := UpstreamGoLine(mod, version); err == nil {
		want = ImpliedGo(line) + " (go line " + line + ")"
	}
	seen := map[string]bool{}
	var gos []string
	for _, b := range bins {
		bi, err := buildinfo.ReadFile(b)
		if err != nil {
			return "", fmt.Errorf("pristine binary %s: %w", b, err)
		}
		if !seen[bi.GoVersion] {
			seen[bi.GoVersion] = true
			gos = append(gos, bi.GoVersion)
		}
	}
	return fmt.Sprintf("Pristine %s %s: upstream's go line implies %s; built with %s.", name, version, want, strings.Join(gos, ", ")), nil
}
