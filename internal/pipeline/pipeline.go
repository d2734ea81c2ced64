package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/holdfast-dist/holdfast/internal/pipeline/carry"
	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/pipeline/stage"
)

// Config says where holdfast's inputs are and where trees go.
type Config struct {
	// Root is holdfast's repository: pins.txt, pkg/, overlay/, tests/,
	// patches/ and go.mod (for holdfast's own module path).
	Root string
	// Out is the folder trees are built in.
	Out string
	// Download fetches pristine upstream source.
	Download pristine.Downloader
	// Log receives one line per step; nil discards.
	Log io.Writer
}

// DefaultOut is where trees go unless told otherwise; _output/ is ignored
// by git.
const DefaultOut = "_output/trees"

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Self is holdfast's module path, read from Root/go.mod.
func (c Config) Self() (string, error) {
	data, err := os.ReadFile(filepath.Join(c.Root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading holdfast's go.mod: %w", err)
	}
	self := modfile.ModulePath(data)
	if self == "" {
		return "", fmt.Errorf("%s has no module line", filepath.Join(c.Root, "go.mod"))
	}
	return self, nil
}

// OverlayDir and TestsDir are the conventional per-upstream folders,
// relative to Root; either may be missing.
func OverlayDir(up *pins.Upstream) string { return path.Join("overlay", up.Name) }

// TestsDir holds the regression tests carried into both trees.
func TestsDir(up *pins.Upstream) string { return path.Join("tests", up.Name) }

// TreeDir is the name of the tree built for pin under Out.
func TreeDir(up *pins.Upstream, version string, kind provenance.Kind) string {
	name := up.Name + "-" + version
	if kind != provenance.Patched {
		name += "-" + string(kind)
	}
	return name
}

// Inputs are the holdfast files a tree is made from.
type Inputs struct {
	Series []*patchset.Patch
	// Overrides are the series' dependency overrides (its overrides file),
	// GoLine its go entry (nil: upstream's go line stays), Waivers the
	// advisories it excuses from the release gate.
	Overrides []overrides.Entry
	GoLine    *overrides.GoLine
	Waivers   []overrides.Waiver
	// SeriesHash covers the ordered patch files, the overlay and the
	// carried libraries; OverridesHash the overrides file alone (empty
	// without one), the only series input a pristine tree depends on.
	SeriesHash    string
	OverridesHash string
	TestsHash     string
}

// LoadInputs parses the series in seriesDir (relative to Root) and hashes
// every input of the upstream's trees. Patch headers are checked here,
// before anything is downloaded.
func (c Config) LoadInputs(up *pins.Upstream, seriesDir string) (*Inputs, error) {
	series, err := patchset.LoadSeries(filepath.Join(c.Root, filepath.FromSlash(seriesDir)))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range series {
		files = append(files, path.Join(seriesDir, p.Name()))
	}
	overridesFile := path.Join(seriesDir, overrides.FileName)
	ov, present, err := overrides.Load(filepath.Join(c.Root, filepath.FromSlash(overridesFile)))
	if err != nil {
		return nil, err
	}
	in := &Inputs{Series: series, Overrides: ov.Entries, GoLine: ov.Go, Waivers: ov.Waivers}
	if present {
		files = append(files, overridesFile)
		if in.OverridesHash, err = c.hash([]string{overridesFile}); err != nil {
			return nil, err
		}
	}
	for _, dir := range append([]string{OverlayDir(up)}, libDirs(up)...) {
		more, err := c.filesUnder(dir)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	if in.SeriesHash, err = c.hash(files); err != nil {
		return nil, err
	}
	tests, err := c.filesUnder(TestsDir(up))
	if err != nil {
		return nil, err
	}
	if in.TestsHash, err = c.hash(tests); err != nil {
		return nil, err
	}
	return in, nil
}

func libDirs(up *pins.Upstream) []string {
	var dirs []string
	for _, lib := range up.Carry {
		dirs = append(dirs, path.Join("pkg", lib))
	}
	return dirs
}

// filesUnder lists the files below dir as Root-relative paths.
func (c Config) filesUnder(dir string) ([]string, error) {
	rel, err := fscopy.Files(filepath.Join(c.Root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	for i, f := range rel {
		rel[i] = path.Join(dir, f)
	}
	return rel, nil
}

// hash is the h1: dirhash of Root-relative files: names and content.
func (c Config) hash(files []string) (string, error) {
	return dirhash.Hash1(files, func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(c.Root, filepath.FromSlash(name)))
	})
}

// key identifies everything that decides a tree's content. A pristine
// tree depends on the series' overrides file only, a released tree on
// nothing of the series: changing the patches, the overlay, the libraries
// or the revision rebuilds neither.
func (in *Inputs) key(up *pins.Upstream, pin pins.Pin, kind provenance.Kind) (string, error) {
	tool, err := toolHash()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "kind %s\nupstream %s %s %s %s\ntests %s\ntool %s\n", kind, up.Name, up.Module, pin.Version, pin.Sum, in.TestsHash, tool)
	switch kind {
	case provenance.Patched:
		fmt.Fprintf(h, "revision %d\nseries %s %s\ncarry %q\n", pin.Revision, pin.Series, in.SeriesHash, up.Carry)
	case provenance.Pristine:
		fmt.Fprintf(h, "overrides %s %s\n", pin.Series, in.OverridesHash)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil)), nil
}

var toolHash = sync.OnceValues(func() (string, error) {
	// The tool is an input like the patches: a holdfast whose carry or
	// apply logic changed must not reuse trees an older one built.
	// Hashing the running executable needs no version to remember to bump.
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the holdfast executable to hash: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
})

// Lay fills dir with the pristine module and, for a patched tree, the
// carried libraries and the overlay; both kinds get the tests. It applies
// no patches.
func (c Config) Lay(dir string, up *pins.Upstream, mod pristine.Module, kind provenance.Kind) error {
	self, err := c.Self()
	if err != nil {
		return err
	}
	if _, err := fscopy.Tree(dir, mod.Dir, fscopy.Options{}); err != nil {
		return fmt.Errorf("copying %s: %w", mod, err)
	}
	if kind == provenance.Patched {
		libs, err := carry.Libs(dir, c.Root, carry.Rewriter{Self: self, Upstream: up.Module, Libs: up.Carry})
		if err != nil {
			return err
		}
		c.logf("  carried %s (%d files) into %s", up.Carry, len(libs), carry.LibsDir)
		overlay, err := carry.Overlay(dir, filepath.Join(c.Root, OverlayDir(up)), self)
		if err != nil {
			return err
		}
		c.logf("  laid %d overlay files from %s", len(overlay), OverlayDir(up))
	}
	tests, err := carry.Overlay(dir, filepath.Join(c.Root, TestsDir(up)), self)
	if err != nil {
		return err
	}
	if len(tests) > 0 {
		c.logf("  laid %d test files from %s", len(tests), TestsDir(up))
	}
	return nil
}

// Result is one tree Build produced or found.
type Result struct {
	Dir     string
	Outcome stage.Outcome
	Record  provenance.Record
}

// Build makes the tree of the given kind for pin, or leaves an up-to-date
// one as it is.
func (c Config) Build(ctx context.Context, up *pins.Upstream, pin pins.Pin, kind provenance.Kind) (Result, error) {
	if !kind.Valid() {
		return Result{}, fmt.Errorf("%s %s: no tree kind %q", up.Name, pin.Version, kind)
	}
	in, err := c.LoadInputs(up, pin.Series)
	if err != nil {
		return Result{}, err
	}
	key, err := in.key(up, pin, kind)
	if err != nil {
		return Result{}, err
	}
	rec := provenance.Record{
		Kind: kind, Upstream: up.Name, Module: up.Module, Version: pin.Version, Sum: pin.Sum,
		TestsHash: in.TestsHash,
	}
	if kind == provenance.Patched {
		rec.Revision, rec.HoldfastVersion = pin.Revision, pin.VersionString()
		rec.Series, rec.SeriesHash, rec.Carried = pin.Series, in.SeriesHash, up.Carry
		for _, p := range in.Series {
			rec.Patches = append(rec.Patches, p.Name())
		}
	}
	dest := filepath.Join(c.Out, TreeDir(up, pin.Version, kind))
	c.logf("%s %s (%s) -> %s", up.Name, pin.Version, kind, dest)
	outcome, err := stage.Ensure(dest, key, func(dir string) error {
		mod, err := c.Download.Fetch(ctx, up.Module, pin.Version, pin.Sum)
		if err != nil {
			return err
		}
		c.logf("  verified %s %s", mod, mod.Sum)
		if err := c.Lay(dir, up, mod, kind); err != nil {
			return err
		}
		// An interrupted run must not finish a tree: stage then removes it.
		if err := ctx.Err(); err != nil {
			return err
		}
		// A patched tree gets the series, then the overrides; a pristine
		// one the overrides only, so that it builds on the same
		// dependency versions as its patched twin.
		if kind == provenance.Patched {
			results, err := patchset.ApplySeries(dir, in.Series)
			if err != nil {
				return err
			}
			for _, r := range results {
				c.logf("  applied %s (%s)", r.Patch.Name(), describe(r))
			}
			if len(results) == 0 {
				c.logf("  series %s is empty", pin.Series)
			}
		}
		if kind != provenance.Released {
			if len(in.Overrides) > 0 || in.GoLine != nil {
				res, err := c.applyOverrides(ctx, dir, overrides.Plan{Go: in.GoLine, Entries: in.Overrides})
				if err != nil {
					return fmt.Errorf("%s/%s: %w", pin.Series, overrides.FileName, err)
				}
				rec.Overrides = res.lines
				rec.GoLine = res.goLine
			}
		}
		return provenance.Write(dir, rec)
	})
	if err != nil {
		return Result{}, fmt.Errorf("%s %s (%s): %w", up.Name, pin.Version, kind, err)
	}
	if outcome.Reused {
		c.logf("  up to date (%s)", outcome.TreeHash)
		// What the build wrote (the requirements the overrides moved)
		// is known only from the tree's own record: callers choose the
		// override importers' tests from it.
		if rec, err = provenance.Read(dest); err != nil {
			return Result{}, fmt.Errorf("%s %s (%s): %w", up.Name, pin.Version, kind, err)
		}
	} else {
		c.logf("  built: %s (%s)", outcome.Reason, outcome.TreeHash)
	}
	return Result{Dir: dest, Outcome: outcome, Record: rec}, nil
}

// appliedOverrides are the provenance lines of an overrides apply: every
// requirement that moved and why, and the go line when the go entry
// raised it.
type appliedOverrides struct {
	lines  []string
	goLine string
}

// applyOverrides raises the tree's requirements (internal/pipeline/overrides)
// and returns the provenance lines.
func (c Config) applyOverrides(ctx context.Context, dir string, plan overrides.Plan) (appliedOverrides, error) {
	res, err := overrides.Apply(ctx, dir, plan, overrides.Go{Bin: c.Download.Go, Env: c.Download.ModuleEnv})
	if err != nil {
		return appliedOverrides{}, err
	}
	var out appliedOverrides
	if res.GoSuperseded != "" {
		c.logf("  go %s: %s", plan.Go.Version, res.GoSuperseded)
	}
	if res.GoLine != nil {
		out.goLine = res.GoLine.String()
		c.logf("  go line %s", out.goLine)
	}
	for _, v := range res.Verdicts {
		if v.Status == overrides.Superseded {
			c.logf("  override %s %s: %s", v.Entry.Module, v.Entry.Version, v.Reason)
		}
	}
	applied := map[string]overrides.Entry{}
	for _, v := range res.Applied {
		applied[v.Entry.Module] = v.Entry
	}
	for _, ch := range res.Changes {
		// A module no entry names moved because an overridden version
		// requires more of it (minimal version selection).
		why := "required by the overridden versions"
		if e, ok := applied[ch.Module]; ok {
			why = "fixes " + strings.Join(e.Fixes, " ")
		}
		from := ch.From
		if from == "" {
			from = "(not required)"
		}
		line := fmt.Sprintf("%s %s => %s (%s)", ch.Module, from, ch.To, why)
		c.logf("  override %s", line)
		out.lines = append(out.lines, line)
	}
	return out, nil
}

func describe(r *patchset.Result) string {
	parts := make([]string, len(r.Files))
	for i, f := range r.Files {
		parts[i] = fmt.Sprintf("%s: %d hunk", f.Path, len(f.Hunks))
		if len(f.Hunks) != 1 {
			parts[i] += "s"
		}
	}
	return strings.Join(parts, ", ")
}
