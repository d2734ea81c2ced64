package treebin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// CacheDir is where the binaries live under the repository root (ignored
// by git with the rest of .cache).
const CacheDir = ".cache/treebin"

// unknown is what Karmada's version package prints for an unset field, and
// what internal/pipeline/build records outside a git checkout.
const unknown = "unknown"

// Request says which binaries to build from which tree.
type Request struct {
	// Root is the repository root; the cache is Root/CacheDir.
	Root string
	// Tree is an applied tree (holdfast apply), patched or pristine; its
	// HOLDFAST-PROVENANCE says which.
	Tree string
	// Upstream is the tree's upstream from pins.txt: its module path and
	// version variables. Its build line is not used.
	Upstream *pins.Upstream
	// Packages are the packages to build, relative to the module root, as
	// in pins.txt ("./cmd/scheduler=karmada-scheduler" names the binary).
	Packages []string
	// Log receives the build's command lines and heartbeats; nil discards.
	Log io.Writer
}

// Result is what Ensure found or built.
type Result struct {
	// Paths maps each binary name to its path.
	Paths map[string]string
	// Dir is the cache folder holding them.
	Dir string
	// Built is true when Ensure compiled them, false on a cache hit.
	Built bool
	// Took is how long Ensure took.
	Took time.Duration
}

// Ensure returns the binaries of r, building them first when the cache has
// none for this tree, these packages and this Go. Concurrent callers, in
// this process or others, wait for one build. A failed build leaves no
// cache folder behind.
func Ensure(ctx context.Context, r Request) (Result, error) {
	begin := time.Now()
	up, names, err := r.upstream()
	if err != nil {
		return Result{}, err
	}
	provData, err := os.ReadFile(filepath.Join(r.Tree, provenance.FileName))
	if err != nil {
		return Result{}, fmt.Errorf("tree %s: %w (apply it first: holdfast apply)", r.Tree, err)
	}
	rec, err := provenance.Parse(provData)
	if err != nil {
		return Result{}, fmt.Errorf("tree %s: %w", r.Tree, err)
	}
	if rec.Upstream != r.Upstream.Name || rec.Module != r.Upstream.Module {
		return Result{}, fmt.Errorf("tree %s is %s (%s), not %s (%s)", r.Tree, rec.Upstream, rec.Module, r.Upstream.Name, r.Upstream.Module)
	}
	stamp := Stamp(rec)
	ldflags, err := build.LDFlags(up.Module, up.Version, stamp)
	if err != nil {
		return Result{}, fmt.Errorf("tree %s: %w", r.Tree, err)
	}
	// The pin's build tags, as `holdfast build` passes them for the shipped
	// binaries: the components run beside them are built as upstream's
	// release builds them too (Karmada's scheduler speaks the estimator's
	// gRPC, whose messages need kubernetes_protomessage_one_more_release).
	pin := pins.Pin{Version: rec.Version}
	for _, p := range r.Upstream.Pins {
		if p.Version == rec.Version {
			pin.Tags = p.Tags
		}
	}
	// build.Build compiles with build.Toolchain, whatever go is on PATH;
	// the tags change the binaries as much as the Go does.
	goVersion := build.Toolchain
	if pin.Tags != "" {
		goVersion += " tags=" + pin.Tags
	}
	name := folderName(rec, key(provData, up.Build, names, ldflags, goVersion))
	out := filepath.Join(r.Root, CacheDir)
	res := Result{Dir: filepath.Join(out, name), Paths: map[string]string{}}
	for _, n := range names {
		res.Paths[n] = filepath.Join(res.Dir, n)
	}
	if complete(res.Paths) {
		res.Took = time.Since(begin)
		return res, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Result{}, err
	}
	unlock, err := toolcache.Lock(ctx, filepath.Join(out, name+".lock"))
	if err != nil {
		return Result{}, fmt.Errorf("waiting for the build lock of %s: %w", name, err)
	}
	defer unlock()
	// Another process may have built them while this one waited.
	if complete(res.Paths) {
		res.Took = time.Since(begin)
		return res, nil
	}
	// Build renames a complete folder into place: a reader sees all the
	// binaries or none.
	if _, err := build.Build(ctx, build.Options{
		Tree: r.Tree, Upstream: up, Pin: pin, Stamp: stamp, Out: out, Name: name, Log: r.Log,
		Pristine: rec.Kind != provenance.Patched,
	}); err != nil {
		return Result{}, err
	}
	if !complete(res.Paths) {
		return Result{}, fmt.Errorf("building %s from %s: %s is incomplete after the build", strings.Join(names, ", "), r.Tree, res.Dir)
	}
	res.Built, res.Took = true, time.Since(begin)
	return res, nil
}

// upstream returns a copy of r.Upstream whose build line is r.Packages,
// so that build.Build compiles exactly those, and their binary names.
func (r Request) upstream() (*pins.Upstream, []string, error) {
	if r.Root == "" || r.Tree == "" || r.Upstream == nil {
		return nil, nil, errors.New("treebin: Root, Tree and Upstream are required")
	}
	if len(r.Packages) == 0 {
		return nil, nil, fmt.Errorf("treebin: no packages to build from %s", r.Tree)
	}
	up := *r.Upstream
	up.Build, up.Binaries = nil, map[string]string{}
	var names []string
	for _, spec := range r.Packages {
		pkg, bin, named := strings.Cut(spec, "=")
		if !strings.HasPrefix(pkg, "./") && pkg != "." {
			return nil, nil, fmt.Errorf("treebin: package %q: want a path relative to the module root (./cmd/x)", spec)
		}
		if named {
			if bin == "" || strings.ContainsAny(bin, `/\`) {
				return nil, nil, fmt.Errorf("treebin: package %q: binary name %q is not a plain file name", spec, bin)
			}
			up.Binaries[pkg] = bin
		}
		if slices.Contains(up.Build, pkg) {
			return nil, nil, fmt.Errorf("treebin: package %s asked for twice", pkg)
		}
		up.Build = append(up.Build, pkg)
		n := up.BinaryName(pkg)
		if slices.Contains(names, n) {
			return nil, nil, fmt.Errorf("treebin: two packages build binary %s", n)
		}
		names = append(names, n)
	}
	return &up, names, nil
}

// Stamp is what the binaries of a tree with provenance rec record as their
// version: the tree's (upstream's version for a pristine tree, as `holdfast
// build --pristine` stamps it), with nothing from holdfast's checkout.
func Stamp(rec provenance.Record) build.Stamp {
	s := build.Stamp{
		Version: rec.Version,
		Source:  build.Source{Commit: unknown, ShortCommit: unknown, TreeState: unknown, Date: time.Unix(0, 0).UTC()},
	}
	if rec.Kind == provenance.Patched {
		s.Version, s.SeriesHash = rec.HoldfastVersion, rec.SeriesHash
	}
	return s
}

// key hashes every input of a build; any change gives a new folder.
func key(provenanceFile []byte, packages, names []string, ldflags, goVersion string) string {
	h := sha256.New()
	parts := append([]string{string(provenanceFile), ldflags, goVersion}, packages...)
	parts = append(parts, names...)
	for _, p := range parts {
		// The length prefix keeps "a"+"bc" and "ab"+"c" apart.
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// folderName is <upstream>-<version>[-pristine|-released]-<key>:
// readable, and one per key.
func folderName(rec provenance.Record, key string) string {
	name := rec.Upstream + "-" + rec.Version
	if rec.Kind != provenance.Patched {
		name += "-" + string(rec.Kind)
	}
	return name + "-" + key
}

func complete(paths map[string]string) bool {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
