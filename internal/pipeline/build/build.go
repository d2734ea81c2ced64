package build

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/progress"
)

// DefaultOut is where binaries go unless told otherwise; _output/ is
// ignored by git.
const DefaultOut = "_output/bin"

// Options say what to build and where.
type Options struct {
	// Tree is the patched tree to build in.
	Tree     string
	Upstream *pins.Upstream
	Pin      pins.Pin
	Stamp    Stamp
	// Out is the folder that receives <upstream>-<version>/ (Name).
	Out string
	// Name is the folder under Out; empty means Dir's <upstream>-<version>.
	// Pristine builds use <upstream>-<version>-pristine so the e2e suites
	// can run the unpatched binary beside the patched one.
	Name string
	// Only, if set, restricts the build to these binary names (the e2e
	// suites need karmada-controller-manager alone, not all three).
	Only []string
	// Platform is the target; the zero Platform is the host, built into
	// Out/<upstream>-<version>/ as always (the e2e suites run those). Any
	// other is cross-compiled into PlatformDir, beside it: a host build
	// replaces its own folder whole and must not take the others with it.
	Platform Platform
	// Env is the go command's environment; nil inherits holdfast's.
	// CGO_ENABLED=0 is always added, and GOOS/GOARCH for a Platform.
	Env []string
	// Pristine says the tree holds upstream's code unchanged (a pristine
	// or a released tree): its binaries record the main module at the
	// pin's version itself, a patched tree's at a pseudo-version after it
	// (see stampedCheckout).
	Pristine bool
	// Toolchain is the Go release that compiles; empty means Toolchain,
	// UpstreamGo the release the tree's go line implies.
	// The upstream's go line stays as it is either way (see Toolchain).
	Toolchain string
	// Log receives the go command lines and, while one runs, a heartbeat
	// line every progress.Interval; nil discards. It is progress, not
	// results: holdfast passes its stderr.
	Log io.Writer
}

// Binary is one built file.
type Binary struct {
	Package string
	Path    string
}

// Dir is the folder a pin's binaries are written to.
func Dir(out string, up *pins.Upstream, version string) string {
	return filepath.Join(out, up.Name+"-"+version)
}

// Build compiles every build package of the upstream into a hidden folder
// beside the destination and renames it into place once all are built; a
// failure leaves the previous binaries as they were.
func Build(ctx context.Context, o Options) ([]Binary, error) {
	if err := checkOnly(o.Upstream, o.Only); err != nil {
		return nil, err
	}
	if err := checkTags(o.Tree, o.Upstream.Name, o.Pin.Version, o.Pin.Tags); err != nil {
		return nil, err
	}
	ldflags, err := LDFlags(o.Upstream.Module, o.Upstream.Version, o.Stamp)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Upstream.Name, o.Pin.Version, err)
	}
	// The go command runs in the tree, so a relative -o would land there.
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	dest := Dir(out, o.Upstream, o.Pin.Version)
	if o.Name != "" {
		dest = filepath.Join(out, o.Name)
	}
	if o.Platform != (Platform{}) {
		dest = platformDir(dest, o.Platform)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".partial-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)                      // gone after the rename; cleans up after a failure
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 would hide the binaries from other users
		return nil, err
	}
	toolchain := o.Toolchain
	if toolchain == "" {
		toolchain = Toolchain
	}
	if toolchain == UpstreamGo {
		if toolchain, err = TreeGo(o.Tree); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Upstream.Name, o.Pin.Version, err)
		}
	}
	goCmd, err := ResolveGo(ctx, toolchain)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Upstream.Name, o.Pin.Version, err)
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(goCmd.Env(env), "CGO_ENABLED=0")
	if o.Platform != (Platform{}) {
		env = append(env, "GOOS="+o.Platform.OS, "GOARCH="+o.Platform.Arch)
	}
	kind := "patched"
	if o.Pristine {
		kind = "pristine"
	}
	src, err := stampedCheckout(ctx, o.Tree, filepath.Dir(dest), o.Pin.Version, !o.Pristine, o.Stamp.Source.Date,
		fmt.Sprintf("%s %s %s (%s)", o.Upstream.Name, o.Stamp.Version, kind, ShortSeriesHash(o.Stamp.SeriesHash)))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Upstream.Name, o.Pin.Version, err)
	}
	defer os.RemoveAll(src)
	var bins []Binary
	for _, pkg := range o.Upstream.Build {
		name := o.Upstream.BinaryName(pkg)
		if len(o.Only) > 0 && !slices.Contains(o.Only, name) {
			continue
		}
		args := []string{"build", "-trimpath", "-buildvcs=true"}
		if o.Pin.Tags != "" {
			args = append(args, "-tags", o.Pin.Tags)
		}
		args = append(args, "-ldflags", ldflags, "-o", filepath.Join(tmp, name), pkg)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "  (cd <git checkout of %s> && GOTOOLCHAIN=%s CGO_ENABLED=0 %sgo %s)\n", o.Tree, toolchain, o.Platform.goEnv(), quote(args))
		}
		cmd := exec.CommandContext(ctx, goCmd.Bin, args...)
		cmd.Dir, cmd.Env = src, env
		// go build holds its output until it ends: a cold build is
		// otherwise silent for minutes.
		stop := progress.Start(o.Log, "building "+name+o.Platform.forLog())
		out, err := cmd.CombinedOutput()
		stop()
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, fmt.Errorf("%s %s: building %s: %v\n%s", o.Upstream.Name, o.Pin.Version, pkg, err, strings.TrimSpace(string(out)))
		}
		bins = append(bins, Binary{Package: pkg, Path: filepath.Join(dest, name)})
	}
	if len(o.Only) > 0 {
		// A partial build must not take away the binaries it did not
		// build: each one replaces its namesake, atomically.
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return nil, err
		}
		for _, b := range bins {
			if err := os.Rename(filepath.Join(tmp, filepath.Base(b.Path)), b.Path); err != nil {
				return nil, err
			}
		}
		return bins, nil
	}
	if err := replace(tmp, dest); err != nil {
		return nil, err
	}
	return bins, nil
}

// replace moves dir to dest, setting any previous dest aside first: a
// directory cannot be renamed over a non-empty one.
func replace(dir, dest string) error {
	old := dir + ".old"
	if err := os.Rename(dest, old); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(dir, dest); err != nil {
		_ = os.Rename(old, dest) // put the previous binaries back
		return err
	}
	return os.RemoveAll(old)
}

func quote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// checkOnly names a binary the upstream does not build rather than
// building nothing.
func checkOnly(up *pins.Upstream, only []string) error {
	var names []string
	for _, pkg := range up.Build {
		names = append(names, up.BinaryName(pkg))
	}
	for _, o := range only {
		if !slices.Contains(names, o) {
			return fmt.Errorf("%s builds no binary %q (it builds %s)", up.Name, o, strings.Join(names, ", "))
		}
	}
	return nil
}
