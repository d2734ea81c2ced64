package standin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treebin"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// Tools are the tool-cache programs the images carry, by binary name.
var Tools = map[string]toolcache.Tool{
	binEtcd:          toolcache.Etcd,
	binKubeAPIServer: toolcache.KubeAPIServer,
	binCfssl:         Cfssl,
	binCfssljson:     Cfssljson,
	binCoreDNS:       CoreDNS,
}

// gather finds or builds every input: tool-cache programs, the pristine
// trees' binaries (internal/pipeline/treebin), the hook tools and busybox.
func gather(ctx context.Context, o Options) (inputs, error) {
	in := inputs{bins: map[string]string{}, debFrom: map[string]string{binBusybox: "given", binBash: "given"}}
	have := func(name string) bool {
		if p := o.Binaries[name]; p != "" {
			in.bins[name] = p
			return true
		}
		return false
	}
	for name, t := range Tools {
		if have(name) {
			continue
		}
		p, err := toolcache.Ensure(ctx, o.Root, t)
		if err != nil {
			return inputs{}, err
		}
		in.bins[name] = p
	}
	// kube-controller-manager and kubectl come out of kube-apiserver's one
	// build (toolcache.KubeAPIServer.Also), which the node harness shares.
	for _, name := range []string{binKubeControllerManager, binKubectl} {
		if have(name) {
			continue
		}
		if _, err := toolcache.Ensure(ctx, o.Root, toolcache.KubeAPIServer); err != nil {
			return inputs{}, err
		}
		in.bins[name] = toolcache.KubeAPIServer.PathOf(o.Root, name)
	}
	pinFile, err := pins.Load(filepath.Join(o.Root, pins.FileName))
	if err != nil {
		return inputs{}, err
	}
	for _, up := range []struct {
		name     string
		packages func(*pins.Upstream) [][]string
	}{
		// Two requests for Karmada: the unshipped components exactly as
		// internal/harness/karmadacp asks for them (one cache folder for both),
		// and pins.txt's build line.
		{"karmada", func(u *pins.Upstream) [][]string { return [][]string{karmadacp.UnshippedPackages(), shipped(u)} }},
		{"workeroperator", func(u *pins.Upstream) [][]string { return [][]string{shipped(u)} }},
	} {
		u, err := pinFile.Upstream(up.name)
		if err != nil {
			return inputs{}, err
		}
		pin, err := u.Pin("")
		if err != nil {
			return inputs{}, err
		}
		tree, err := o.Trees.Build(ctx, u, pin, provenance.Pristine)
		if err != nil {
			return inputs{}, err
		}
		if up.name == "workeroperator" {
			in.workerTree = tree.Dir
		}
		for _, pkgs := range up.packages(u) {
			if all(pkgs, func(p string) bool { return o.Binaries[binaryName(u, p)] != "" }) {
				for _, p := range pkgs {
					have(binaryName(u, p))
				}
				continue
			}
			res, err := treebin.Ensure(ctx, treebin.Request{Root: o.Root, Tree: tree.Dir, Upstream: u, Packages: pkgs, Log: o.Log})
			if err != nil {
				return inputs{}, fmt.Errorf("pristine %s binaries for stand-in images: %w", up.name, err)
			}
			for n, p := range res.Paths {
				if !have(n) {
					in.bins[n] = p
				}
			}
		}
	}
	if !have(binHooktools) {
		if in.bins[binHooktools], err = buildHooktools(ctx, o); err != nil {
			return inputs{}, err
		}
	}
	for name, d := range map[string]debStatic{binBusybox: debBusybox, binBash: debBash} {
		if have(name) {
			continue
		}
		if in.bins[name], in.debFrom[name], err = d.fetch(ctx, o); err != nil {
			return inputs{}, err
		}
	}
	return in, nil
}

// shipped is pins.txt's build line as treebin packages, each naming its
// binary as the shipped build names it (treebin ignores the upstream's
// own names).
func shipped(u *pins.Upstream) []string {
	pkgs := make([]string, len(u.Build))
	for i, p := range u.Build {
		pkgs[i] = p + "=" + u.BinaryName(p)
	}
	return pkgs
}

// binaryName is the binary of a pins.txt-form package (PKG or PKG=BINARY).
func binaryName(u *pins.Upstream, spec string) string {
	pkg, bin, named := strings.Cut(spec, "=")
	if named {
		return bin
	}
	return u.BinaryName(pkg)
}

func all(xs []string, f func(string) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

// hooktoolsPackage is the openssl/curl stand-in, relative to the root.
const hooktoolsPackage = "./internal/harness/standin/hooktools"

// buildHooktools cross-builds the hook tools for the node (amd64) into
// the cache, with the flags every holdfast build uses; the Go build cache
// makes a second call a link at most.
func buildHooktools(ctx context.Context, o Options) (string, error) {
	out := filepath.Join(o.Root, CacheDir, "hooktools-linux-amd64")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".hooktools-")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", tmp, hooktoolsPackage)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w: %s", hooktoolsPackage, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	return out, nil
}

// CacheDir holds what the stand-ins need besides the tool cache and
// treebin: busybox, the hook tools.
const CacheDir = ".cache/standin"

// goZoneinfo is the Go toolchain's time zone database, as holdfast's
// images carry it.
func goZoneinfo(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		return nil, fmt.Errorf("the Go toolchain's time zone database: %w", err)
	}
	return data, nil
}
