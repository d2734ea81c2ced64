package toolcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tool is a binary built from Go modules through a generated wrapper module.
type Tool struct {
	// Name is the binary's name and the first half of its cache folder,
	// e.g. "kube-apiserver".
	Name string
	// Version is the second half of the cache folder, e.g. "v1.35.3". It is
	// for people and folder names; the stamp, not the version, decides
	// whether a cached binary is current.
	Version string
	// GoMod is the complete content of the wrapper module's go.mod: its
	// module line, go line, requires and replaces. `go mod tidy` completes it.
	GoMod string
	// Package is the import path of the command to build,
	// e.g. "k8s.io/kubernetes/cmd/kube-apiserver".
	Package string
	// LDFlags is passed to go build -ldflags when not empty (for example to
	// set a version variable).
	LDFlags string
	// Tags are build tags passed to go build -tags when not empty, for a
	// tool whose module offers tags that leave out code the suites never
	// run (Prometheus's remove_all_sd drops its service-discovery
	// providers and their cloud SDKs from promtool).
	Tags []string
	// Install builds Package@Version with `go install` instead of a wrapper
	// module, for a tool that reads its own version from its build
	// information and has no variable for -ldflags -X to set (govulncheck):
	// built through a wrapper, its main module is the wrapper, "(devel)".
	// Installed, its own module is the main module and carries Version. The
	// tool's own go.mod and go.sum then decide its dependencies, checked
	// against the checksum database like every download; GoMod must be
	// empty, and Version must be the module version of Package.
	Install bool
	// Also are further commands built by the same `go build` as Package,
	// from the same wrapper module, into the same folder, each named after
	// its package (PathOf). The node's kubelet, kube-controller-manager,
	// kube-scheduler and kube-proxy share most of kube-apiserver's packages:
	// one build compiles each shared package once and links them all, where
	// separate tools would each wait for their own build.
	Also []string
	// Main, when not empty, is the body of the wrapper module's own
	// main.go (package main, imports included), built instead of
	// Package's main package, for a command whose module composes its
	// binary from plugins: CoreDNS's main imports every plugin of its
	// plugin.cfg (and their cloud SDKs), while the node's Corefile uses
	// five; a main importing coremain and those five builds about half
	// the packages (555 of 1071, go list -deps). CoreDNS documents this
	// way of building it (plugin.cfg and a main of one's own). Package
	// stays the module's command for the record; the wrapper must require
	// every module Main imports.
	Main string
}

// CacheDir is where tools live under the repository root. It is ignored by
// git (.gitignore) and by `go ... ./...` (a leading dot), so wrapper modules
// inside it never join the repository's module.
const CacheDir = ".cache/tools"

// Dir is the folder holding the tool's binary, stamp and build records.
func (t Tool) Dir(root string) string {
	return filepath.Join(root, CacheDir, t.folder())
}

// folder is Dir's last element: <name>-<version>, and for a tool with
// Also a suffix naming that set, so that checkouts sharing one .cache (git
// worktrees, a CI cache restored by prefix) whose definitions differ only
// in Also do not rebuild over each other's binaries in turn.
func (t Tool) folder() string {
	f := t.Name + "-" + t.Version
	if len(t.Also) > 0 {
		h := sha256.Sum256([]byte(strings.Join(t.Also, "\n")))
		f += "-also-" + hex.EncodeToString(h[:4])
	}
	return f
}

// Path is where Ensure puts the tool's binary.
func (t Tool) Path(root string) string {
	return filepath.Join(t.Dir(root), t.Name)
}

// PathOf is where Ensure puts the binary of name: Name itself, or one of
// Also by the last element of its package path ("kubelet" for
// "k8s.io/kubernetes/cmd/kubelet").
func (t Tool) PathOf(root, name string) string {
	return filepath.Join(t.Dir(root), name)
}

// binaries are the file names Ensure leaves in Dir: Name, then one per Also.
func (t Tool) binaries() []string {
	names := []string{t.Name}
	for _, pkg := range t.Also {
		names = append(names, installedName(pkg))
	}
	return names
}

// stamp is what a cached binary must have been built from to be reused: the
// definition and the Go version (a new compiler may change the binary, and a
// binary built by an older Go would otherwise be kept forever).
func (t Tool) stamp(goVersion string) string {
	h := sha256.New()
	parts := []string{t.GoMod, t.Package, t.LDFlags, goVersion}
	if t.Install {
		// Appended only for installed tools, so that the stamps of the
		// wrapper-built ones (and the binaries cached under them) stay.
		parts = append(parts, "install "+t.Package+"@"+t.Version)
	}
	if len(t.Also) > 0 {
		// Appended only when set, for the same reason as above: a tool
		// without Also keeps its stamp.
		parts = append(parts, "also "+strings.Join(t.Also, " "))
	}
	if len(t.Tags) > 0 {
		// Appended only when set, for the same reason as above.
		parts = append(parts, "tags "+strings.Join(t.Tags, ","))
	}
	if t.Main != "" {
		// Appended only when set, for the same reason as above.
		parts = append(parts, "main "+t.Main)
	}
	for _, part := range parts {
		// The length prefix keeps "a"+"bc" and "ab"+"c" apart.
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (t Tool) validate() error {
	required := []string{"Name", "Version", "Package"}
	if !t.Install {
		required = append(required, "GoMod")
	}
	fields := map[string]string{"Name": t.Name, "Version": t.Version, "GoMod": t.GoMod, "Package": t.Package}
	var missing []string
	for _, field := range required {
		if strings.TrimSpace(fields[field]) == "" {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tool %q: empty %s", t.Name, strings.Join(missing, ", "))
	}
	if t.Install && t.GoMod != "" {
		return fmt.Errorf("tool %q: Install builds from the tool's own go.mod; GoMod must be empty", t.Name)
	}
	if t.Install && len(t.Also) > 0 {
		return fmt.Errorf("tool %q: Also needs a wrapper module; Install builds one command", t.Name)
	}
	if t.Main != "" && (t.Install || len(t.Also) > 0) {
		return fmt.Errorf("tool %q: Main is the wrapper module's one command; it cannot be installed or built with Also", t.Name)
	}
	if t.Main != "" && !strings.HasPrefix(strings.TrimSpace(t.Main), "package main") {
		return fmt.Errorf("tool %q: Main must start with \"package main\"", t.Name)
	}
	seen := map[string]bool{}
	for _, name := range t.binaries() {
		if seen[name] {
			return fmt.Errorf("tool %q: two commands would both be named %q in its folder", t.Name, name)
		}
		seen[name] = true
	}
	if strings.ContainsAny(t.Name+t.Version, `/\`) || t.Name == "." || t.Name == ".." {
		return fmt.Errorf("tool %q version %q: name and version must be plain folder names", t.Name, t.Version)
	}
	return nil
}

const stampFile = "stamp"

// logf reports a build starting; a variable so tests can count builds.
var logf = log.Printf

// Ensure returns the path of the cached binary of t under root, building it
// first if it is missing or was built from a different definition or Go
// version. Concurrent callers, in this process or in other test binaries,
// wait for one build. The first build of kube-apiserver takes minutes on a
// cold Go build cache, so Ensure logs one line when it starts building.
func Ensure(ctx context.Context, root string, t Tool) (string, error) {
	if err := t.validate(); err != nil {
		return "", err
	}
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return "", fmt.Errorf("tool %s: %w", t.Name, err)
	}
	want := t.stamp(goVersion)
	if current(root, t, want) {
		return t.Path(root), nil
	}

	if err := os.MkdirAll(filepath.Join(root, CacheDir), 0o755); err != nil {
		return "", fmt.Errorf("tool %s: %w", t.Name, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, CacheDir, t.folder()+".lock"))
	if err != nil {
		return "", fmt.Errorf("tool %s %s: waiting for the build lock: %w", t.Name, t.Version, err)
	}
	defer unlock()
	// Another process may have built it while this one waited for the lock.
	if current(root, t, want) {
		return t.Path(root), nil
	}

	logf("building %s %s (first run only)", t.Name, t.Version)
	if err := build(ctx, root, t, want); err != nil {
		return "", err
	}
	return t.Path(root), nil
}

// current reports whether the cached binary exists and carries the wanted
// stamp. Any doubt (unreadable stamp, missing binary) means "rebuild".
func current(root string, t Tool, want string) bool {
	got, err := os.ReadFile(filepath.Join(t.Dir(root), stampFile))
	if err != nil || strings.TrimSpace(string(got)) != want {
		return false
	}
	for _, name := range t.binaries() {
		fi, err := os.Stat(t.PathOf(root, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

func goEnv(ctx context.Context, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", fmt.Errorf("go env %s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("go env %s: %w (is Go on PATH?)", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
