package toolcache

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/holdfast-dist/holdfast/internal/logtail"
)

// buildLogLines is how much of a failed build's log an error quotes: enough
// for the compiler's or the module loader's message, short enough to read.
const buildLogLines = 20

// build makes the wrapper module in a temporary folder next to the cache,
// builds the binary there and moves it into place, writing the stamp last:
// a build that fails or is interrupted never leaves a binary that looks
// current.
func build(ctx context.Context, root string, t Tool, stamp string) (err error) {
	cache := filepath.Join(root, CacheDir)
	work, err := os.MkdirTemp(cache, t.folder()+".build-")
	if err != nil {
		return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
	}
	defer os.RemoveAll(work)

	dir := t.Dir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
	}
	// An old stamp must not outlive the binary it describes.
	if err := os.Remove(filepath.Join(dir, stampFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
	}
	logPath := filepath.Join(dir, "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
	}
	defer logFile.Close()

	out := filepath.Join(work, t.Name)
	var steps [][]string
	var env []string
	if t.Install {
		// `go install` puts the binary in GOBIN, here the work folder.
		out = filepath.Join(work, installedName(t.Package))
		env = []string{"GOBIN=" + work}
		steps = [][]string{goArgs("install", "", t.LDFlags, t.Tags, t.Package+"@"+t.Version)}
	} else {
		if err := writeWrapper(work, t); err != nil {
			return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
		}
		target := t.Package
		if t.Main != "" {
			target = "."
		}
		steps = [][]string{{"mod", "tidy"}, goArgs("build", out, t.LDFlags, t.Tags, target)}
		if len(t.Also) > 0 {
			// With several packages, -o names a folder ending in a slash
			// and each binary is named after its package.
			out = filepath.Join(work, "bin")
			steps[1] = goArgs("build", out+string(filepath.Separator), t.LDFlags, t.Tags, append([]string{t.Package}, t.Also...)...)
		}
	}
	for _, step := range steps {
		if err := runGo(ctx, work, logFile, env, step...); err != nil {
			return fmt.Errorf("tool %s %s: %w; see %s:\n%s", t.Name, t.Version, err, logPath, logtail.Last(logPath, buildLogLines))
		}
	}

	if len(t.Also) > 0 {
		pkgs := append([]string{t.Package}, t.Also...)
		for i, name := range t.binaries() {
			if err := os.Rename(filepath.Join(out, installedName(pkgs[i])), t.PathOf(root, name)); err != nil {
				return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
			}
		}
	} else if err := os.Rename(out, t.Path(root)); err != nil {
		return fmt.Errorf("tool %s %s: %w", t.Name, t.Version, err)
	}
	// The record of exactly which module versions the binary was built
	// from: the wrapper's go.mod and go.sum, or for an installed tool its
	// build information (what `go version -m` prints).
	if t.Install {
		if bi, err := buildinfo.ReadFile(t.Path(root)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "buildinfo.txt"), []byte(bi.String()), 0o644)
		}
	} else {
		for _, name := range []string{"go.mod", "go.sum"} {
			if data, err := os.ReadFile(filepath.Join(work, name)); err == nil {
				_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
			}
		}
	}
	return writeAtomic(filepath.Join(dir, stampFile), []byte(stamp+"\n"))
}

// installedName is the file name `go install` gives the command pkg: its
// last path element, or the one before a major version suffix (".../v2").
func installedName(pkg string) string {
	base := path.Base(pkg)
	if dir := path.Dir(pkg); dir != "." && len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		return path.Base(dir)
	}
	return base
}

// writeWrapper writes the wrapper module of t into work: its go.mod, and a
// tools.go importing the command, or t.Main as main.go.
func writeWrapper(work string, t Tool) error {
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(t.GoMod), 0o644); err != nil {
		return err
	}
	if t.Main != "" {
		return os.WriteFile(filepath.Join(work, "main.go"), []byte(t.Main), 0o644)
	}
	// tools.go is the usual way to pin a command in a module: the build
	// constraint keeps it out of every build while `go mod tidy` still sees
	// the import and records the command's dependencies.
	var imports strings.Builder
	for _, pkg := range append([]string{t.Package}, t.Also...) {
		fmt.Fprintf(&imports, "import _ %q\n", pkg)
	}
	toolsGo := "//go:build tools\n\npackage tools\n\n" + imports.String()
	return os.WriteFile(filepath.Join(work, "tools.go"), []byte(toolsGo), 0o644)
}

// goArgs is `go build` or `go install` with the flags every tool build
// uses (see the package doc): -trimpath, -o out when not empty, -ldflags
// and -tags when not empty, then the package.
func goArgs(verb, out, ldflags string, tags []string, pkgs ...string) []string {
	args := []string{verb, "-trimpath"}
	if out != "" {
		args = append(args, "-o", out)
	}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	return append(args, pkgs...)
}

// runGo runs the go command in dir with the environment every tool build
// uses, plus extra, logging to log. The process group is killed on
// cancellation so that the compilers go build started do not keep running
// after the test gave up.
func runGo(ctx context.Context, dir string, log *os.File, extra []string, args ...string) error {
	fmt.Fprintf(log, "$ go %s\n", strings.Join(args, " "))
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.Env = append(os.Environ(),
		// Static binaries, and the exact flags the Go build cache was warmed
		// with (see the package doc).
		"CGO_ENABLED=0",
		// -mod=mod lets tidy and build update go.sum; -buildvcs=false because
		// the wrapper module sits inside holdfast's git checkout and must not
		// be stamped with (or fail on) holdfast's VCS state.
		"GOFLAGS=-mod=mod -buildvcs=false",
		// A go.work above the cache must not pull the wrapper into a workspace.
		"GOWORK=off",
	)
	cmd.Env = append(cmd.Env, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Start()
	if err == nil {
		// The go command and every compiler it has spawned are in the
		// group (Setpgid); the ones it spawns later inherit its nice.
		// Best effort: a build at the caller's priority is only slower
		// for others.
		_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, buildNice())
		err = cmd.Wait()
	}
	fmt.Fprintf(log, "# go %s: %v after %s\n", args[0], errOrOK(err), time.Since(start).Round(time.Millisecond))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("go %s: %w", args[0], context.Cause(ctx))
		}
		return fmt.Errorf("go %s: %w", args[0], err)
	}
	return nil
}

// BuildNice is the least nice value a tool's build runs at. A build
// that fills the cache is never what anything is waiting on as urgently
// as the processes a running suite started (a cold run saw a test build
// cosign at normal priority beside the node suite). Whoever called
// Ensure, a make target or a test, the build yields. (The node's pods
// being starved in that run had a deeper cause, their cgroup's weight:
// internal/harness/node's podsCPUWeight.)
const BuildNice = 10

// buildNice is BuildNice, or the caller's own nice value when that is
// higher: a build never runs at a higher priority than its caller.
func buildNice() int {
	// The raw getpriority system call returns 20 - nice.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return BuildNice
	}
	return max(BuildNice, 20-raw)
}

func errOrOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
