package treetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/progress"
)

// Runner runs `go test -json` in a tree.
type Runner struct {
	// Env is the go command's environment; nil inherits holdfast's.
	Env []string
	// Toolchain, if set, is the Go release that runs the tests
	// (build.Toolchain: the trees are tested with what compiles the shipped
	// binaries); empty runs the go command on PATH as the tree's go.mod
	// and GOTOOLCHAIN select it.
	Toolchain string
	// Log receives the command line of every run and, while one runs, a
	// heartbeat line every progress.Interval; nil discards. It is
	// progress, not results: holdfast passes its stderr.
	Log io.Writer
	// Tags are the pin's build tags (pins.Pin.Tags), passed to every go
	// test as `holdfast build` passes them to go build: upstream's tests run
	// as its Makefile runs them, on the code that ships.
	Tags string
}

// Run is the outcome of one `go test -json` invocation.
type Run struct {
	// Tests maps "package TestName" (top-level tests only) to pass. A
	// skipped test did not fail, so it is true here and also in Skipped,
	// as is a passing test whose subtests all skipped.
	Tests   map[string]bool
	Skipped map[string]bool
	// Packages maps each package to whether it passed; a package that
	// failed to build is false and listed in BuildFailed.
	Packages    map[string]bool
	BuildFailed []string
	// Output keeps the output lines of failed tests and builds, for the
	// report, in arrival order.
	Output   []string
	Duration time.Duration
}

// event is one line of test2json (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// GoTest runs `go test -json args... pkgs...` in dir. A non-zero exit of
// the go command is not an error: failures are in the Run. The error is
// for a go command that could not run or whose output is not test2json.
func (r Runner) GoTest(ctx context.Context, dir string, args, pkgs []string) (*Run, error) {
	// -trimpath: without it the go command keys each package of the tree by
	// its directory, so every in-tree package is compiled once for the
	// pristine tree, again for the patched one and again for `holdfast
	// build` (which builds with -trimpath). With it, a package whose
	// sources are the same in two trees is compiled once: the cold
	// upstream-test run is bounded by what the series really changes.
	tmp, err := os.MkdirTemp("", "holdfast-gotest-")
	if err != nil {
		return nil, fmt.Errorf("go test in %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	offline, err := offlineExec(tmp)
	if err != nil {
		return nil, fmt.Errorf("go test in %s: %w", dir, err)
	}
	// -exec: every test binary runs with loopback as its only network
	// (offlineExecScript); the go command itself still reaches the proxy.
	argv := []string{"test", "-json", "-trimpath", "-exec", offline}
	if r.Tags != "" {
		argv = append(argv, "-tags", r.Tags)
	}
	argv = append(append(argv, args...), pkgs...)
	env := envOrOS(r.Env)
	goBin, toolchainEnv := "go", ""
	if r.Toolchain != "" {
		g, err := build.ResolveGo(ctx, r.Toolchain)
		if err != nil {
			return nil, fmt.Errorf("go test in %s: %w", dir, err)
		}
		goBin, env, toolchainEnv = g.Bin, g.Env(env), "GOTOOLCHAIN="+r.Toolchain+" "
	}
	// CGO_ENABLED=0, as `holdfast build` compiles the shipped binaries: the
	// tests run the code that ships (pure-Go resolver and user lookup), and
	// every dependency compiled for the build is reused, not compiled again
	// with cgo (package net differs, and so does everything above it). That
	// second copy of a tree's dependencies was gigabytes of build cache.
	env = append(env, "CGO_ENABLED=0")
	if r.Log != nil {
		fmt.Fprintf(r.Log, "  (cd %s && %sCGO_ENABLED=0 go %s)\n", dir, toolchainEnv, strings.Join(argv, " "))
	}
	if err := prefetchRootPackage(ctx, goBin, dir, env); err != nil {
		return nil, fmt.Errorf("go test in %s: %w", dir, err)
	}
	cmd := exec.CommandContext(ctx, goBin, argv...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go test in %s: %w", dir, err)
	}
	// go test -json streams events, but they are parsed, not shown, and a
	// tree's first test run compiles for minutes.
	stop := progress.Start(r.Log, "running go test in "+dir)
	run, parseErr := parse(stdout)
	waitErr := cmd.Wait()
	stop()
	run.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if parseErr != nil {
		return nil, fmt.Errorf("go test in %s: reading its -json output: %w", dir, parseErr)
	}
	// Build errors of test packages arrive as events; anything left on
	// stderr with no package outcome at all (a bad pattern, a broken
	// go.mod) means nothing was tested.
	if waitErr != nil && len(run.Packages) == 0 {
		return nil, fmt.Errorf("go test in %s: %v: %s", dir, waitErr, strings.TrimSpace(stderr.String()))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		run.Output = append(run.Output, strings.Split(s, "\n")...)
	}
	return run, nil
}

// prefetchRootPackage downloads the modules the tree's root package needs.
// A regression test may build the module's main package the way upstream's
// image ships it (the worker-operator's tests build `.` as /manager); its
// test binary runs offline (-exec), so its go command finds only what the
// module cache already holds. The test packages' own modules arrive with
// the go test build; the root package's do not when no tested package
// imports them, which on a cold module cache made the pristine tree's
// regression tests fail to build. `go list -e`: a tree whose root is no
// package (Karmada's) is not an error.
func prefetchRootPackage(ctx context.Context, goBin, dir string, env []string) error {
	cmd := exec.CommandContext(ctx, goBin, "list", "-e", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("downloading the modules of the root package (go list -deps .): %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func parse(r io.Reader) (*Run, error) {
	run := &Run{Tests: map[string]bool{}, Skipped: map[string]bool{}, Packages: map[string]bool{}}
	// Output of a test is only kept once it is known to have failed.
	pending := map[string][]string{}
	failedBuild := map[string]bool{}
	subtests := map[string]string{} // "package Test/sub" -> "pass" or "skip"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go vet or build noise outside the event stream
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			return run, err
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "build-output":
			pending["build "+ev.ImportPath] = append(pending["build "+ev.ImportPath], strings.TrimRight(ev.Output, "\n"))
		case "build-fail":
			failedBuild[ev.ImportPath] = true
			run.Output = append(run.Output, pending["build "+ev.ImportPath]...)
		case "output":
			pending[key] = append(pending[key], strings.TrimRight(ev.Output, "\n"))
		case "pass", "skip":
			if ev.Test == "" {
				run.Packages[ev.Package] = true
			} else if !strings.Contains(ev.Test, "/") {
				run.Tests[key] = true
				if ev.Action == "skip" {
					run.Skipped[key] = true
				}
			} else {
				subtests[key] = ev.Action
			}
			delete(pending, key)
		case "fail":
			if ev.Test == "" {
				run.Packages[ev.Package] = false
			} else if !strings.Contains(ev.Test, "/") {
				run.Tests[key] = false
			}
			run.Output = append(run.Output, pending[key]...)
			delete(pending, key)
		}
	}
	if err := sc.Err(); err != nil {
		return run, err
	}
	for key, ok := range run.Tests {
		if ok && allSubtestsSkipped(subtests, key) {
			run.Skipped[key] = true
		}
	}
	for pkg, ok := range run.Packages {
		if ok {
			continue
		}
		// A package that failed with no failed test did not build (or its
		// TestMain failed): go reports "[build failed]"/"[setup failed]".
		if failedBuild[pkg] || !run.anyTestIn(pkg) {
			run.BuildFailed = append(run.BuildFailed, pkg)
		}
	}
	sort.Strings(run.BuildFailed)
	return run, nil
}

// allSubtestsSkipped reports whether the passing test key ("package
// TestName") ran subtests (t.Run) and every one skipped: such a test
// exercised nothing, though go test reports it as passed. A subtest that
// passed counts as skipped only when it has subtests of its own, all
// skipped. (A subtest whose name holds "/" reads as a deeper one; its
// outcome is counted all the same.)
func allSubtestsSkipped(subtests map[string]string, key string) bool {
	ran := false
	for sub, action := range subtests {
		if !strings.HasPrefix(sub, key+"/") {
			continue
		}
		ran = true
		if action != "skip" && !hasSubtests(subtests, sub) {
			return false
		}
	}
	return ran
}

func hasSubtests(subtests map[string]string, key string) bool {
	for sub := range subtests {
		if strings.HasPrefix(sub, key+"/") {
			return true
		}
	}
	return false
}

func (r *Run) anyTestIn(pkg string) bool {
	for key := range r.Tests {
		if strings.HasPrefix(key, pkg+" ") {
			return true
		}
	}
	return false
}

// Test returns whether the top-level test name ran in some package and,
// if so, whether it passed everywhere it ran. A skipped test counts as run
// and passed here; State tells it apart.
func (r *Run) Test(name string) (ran, passed bool) {
	passed = true
	for key, ok := range r.Tests {
		if strings.HasSuffix(key, " "+name) {
			ran = true
			passed = passed && ok
		}
	}
	return ran, ran && passed
}

// State is how the top-level test name fared: Broken if it did not run,
// Red if it failed anywhere, Skipped if it skipped anywhere (it proves
// nothing, whichever colour was wanted), else Green.
func (r *Run) State(name string) State {
	ran, passed := r.Test(name)
	switch {
	case !ran:
		return Broken
	case !passed:
		return Red
	}
	for key := range r.Skipped {
		if strings.HasSuffix(key, " "+name) {
			return Skipped
		}
	}
	return Green
}

// FailedPackages lists the packages that failed, sorted.
func (r *Run) FailedPackages() []string {
	var failed []string
	for pkg, ok := range r.Packages {
		if !ok {
			failed = append(failed, pkg)
		}
	}
	sort.Strings(failed)
	return failed
}

// FailedTests lists "package TestName" of the failed top-level tests,
// leaving out those named in except.
func (r *Run) FailedTests(except []string) []string {
	skip := map[string]bool{}
	for _, name := range except {
		skip[name] = true
	}
	var failed []string
	for key, ok := range r.Tests {
		if _, name, _ := strings.Cut(key, " "); !ok && !skip[name] {
			failed = append(failed, key)
		}
	}
	sort.Strings(failed)
	return failed
}

func envOrOS(env []string) []string {
	if env == nil {
		return os.Environ()
	}
	return env
}
