package build

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
)

// Toolchain is the Go release every shipped binary is built with, and the
// patched trees' tests run with: the newest approved release, whose
// standard library has the fixes upstream's own toolchain lacks (go1.26.8
// has 12 reachable advisories fixed in go1.26.10).
//
// Only the compiler and standard library move. Each upstream's go.mod `go`
// line is left as upstream wrote it: the go command derives the binary's
// default GODEBUG settings from the main module's go line (every setting
// whose default changed after that release keeps its old value), so the
// runtime behaves as upstream released it. Raising the go line would
// silently switch those behaviours (TLS key exchanges, x509 parsing,
// HTTP limits) on a patch release.
const Toolchain = "go1.27.3"

// UpstreamGo, as Options.Toolchain or `holdfast build --pristine
// --toolchain`, compiles with the Go release the tree's own go line implies
// (TreeGo): the pristine twins of the side-by-side table are then upstream
// as its own release build compiles it (Karmada v1.18.2's go 1.25.10 is
// go1.25.10), not a release chosen by hand for every pin at once.
const UpstreamGo = "upstream"

// TreeGo is the Go release the go line of tree's go.mod implies.
func TreeGo(tree string) (string, error) {
	path := filepath.Join(tree, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("upstream's Go: %w", err)
	}
	f, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return "", fmt.Errorf("upstream's Go: %w", err)
	}
	if f.Go == nil {
		return "", fmt.Errorf("upstream's Go: %s has no go line", path)
	}
	return ImpliedGo(f.Go.Version), nil
}

// Go is a resolved toolchain: its go command and GOROOT.
type Go struct {
	Version string
	Bin     string
	GOROOT  string
}

// Env returns env set up to run g.Bin: GOTOOLCHAIN=local so that no go.mod
// can switch it to another release (a tree that needs a newer one fails
// instead), and GOROOT set to the toolchain's own, since one inherited from
// a `go run` of holdfast names holdfast's Go.
func (g Go) Env(env []string) []string {
	return append(withoutKeys(env, "GOTOOLCHAIN", "GOROOT"), "GOTOOLCHAIN=local", "GOROOT="+g.GOROOT)
}

var (
	resolvedMu sync.Mutex
	resolved   = map[string]Go{}
)

// ResolveGo returns the go command of version (go1.27.3), which the go
// command on PATH fetches through the module proxy on first use, with the
// checksum database consulted as for any module (golang.org/toolchain). It
// runs in holdfast's own environment, not a build's: a test's build
// environment points the proxy at a fake one that serves no toolchain.
func ResolveGo(ctx context.Context, version string) (Go, error) {
	resolvedMu.Lock()
	defer resolvedMu.Unlock()
	if g, ok := resolved[version]; ok {
		return g, nil
	}
	cmd := exec.CommandContext(ctx, "go", "env", "-json", "GOROOT", "GOVERSION")
	// Outside any module: a go.mod in the working folder must not decide.
	cmd.Dir = os.TempDir()
	cmd.Env = append(withoutKeys(os.Environ(), "GOTOOLCHAIN", "GOROOT"), "GOTOOLCHAIN="+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Go{}, fmt.Errorf("fetching Go toolchain %s (GOTOOLCHAIN=%s go env): %w: %s", version, version, err, strings.TrimSpace(stderr.String()))
	}
	var vars struct{ GOROOT, GOVERSION string }
	if err := json.Unmarshal(out, &vars); err != nil {
		return Go{}, fmt.Errorf("Go toolchain %s: go env -json: %w", version, err)
	}
	// A GOVERSION with a suffix (go1.27.3 X:...) is another build of it.
	if vars.GOVERSION != version {
		return Go{}, fmt.Errorf("Go toolchain %s: GOTOOLCHAIN=%s runs %s", version, version, vars.GOVERSION)
	}
	g := Go{Version: version, GOROOT: vars.GOROOT, Bin: filepath.Join(vars.GOROOT, "bin", "go")}
	resolved[version] = g
	return g, nil
}

func withoutKeys(env []string, keys ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
