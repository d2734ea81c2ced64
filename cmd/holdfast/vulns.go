package main

import (
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/pipeline/release"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
)

// defaultReports is where `holdfast vulns` writes its folder unless told
// otherwise.
const defaultReports = "_output/reports"

// runVulns scans binaries with govulncheck against the pinned vulndb
// snapshot and writes the vulnerabilities/ report. Whatever it finds, it
// exits 0: the report is the result, and a release names what it ships
// with rather than refusing to ship; it exits 1 when a binary could not be
// scanned.
func runVulns(ctx context.Context, e *env, args []string) error {
	fs := e.flags("vulns")
	out := fs.String("out", "", "folder to write vulnerabilities/ into (default: <root>/"+defaultReports+")")
	bin := fs.String("bin", "", "folder of the built binaries, without BINARY arguments (default: <root>/"+build.DefaultOut+")")
	pristine := fs.Bool("pristine", false, "without BINARY arguments: scan the pins' released twins (upstream's release, its own dependency versions) in --pristine-bin too and print upstream's counts next to holdfast's (vulnerabilities/"+sideBySideFile+")")
	pristineBin := fs.String("pristine-bin", "", "with --pristine: folder of the released twins built with upstream's Go, make upstream-go-twins (default: <root>/"+release.DefaultPristineBin+")")
	name := fs.String("upstream", "", "without BINARY arguments: scan this upstream's pin (--version, default its default pin) instead of every upstream's default pin")
	version := fs.String("version", "", "with --upstream: the pinned version to scan")
	mainVersions := fs.String("main-version", "", "with BINARY arguments: MODULE@VERSION,... the version each main module was built from, for binaries whose build information says (devel)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return parse(fs, args)
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *out == "" {
		*out = filepath.Join(e.root, defaultReports)
	}
	if *version != "" && *name == "" {
		return fmt.Errorf("%w: --version needs --upstream", errUsage)
	}
	var bins []vulnreport.Binary
	if fs.NArg() > 0 {
		if *name != "" {
			return fmt.Errorf("%w: --upstream selects a pin's binaries; it and BINARY arguments exclude each other", errUsage)
		}
		if *bin != "" {
			return fmt.Errorf("%w: --bin names the folder of the default pins' binaries; it and BINARY arguments exclude each other", errUsage)
		}
		var err error
		if *pristine {
			return fmt.Errorf("%w: --pristine compares pinned binaries with their pristine twins; it takes no BINARY arguments", errUsage)
		}
		if bins, err = argBinaries(fs.Args(), *mainVersions); err != nil {
			return err
		}
	}
	var selected []pinOf
	if fs.NArg() == 0 {
		if *mainVersions != "" {
			return fmt.Errorf("%w: --main-version is for BINARY arguments; the default pins' binaries take their pin's version", errUsage)
		}
		if *bin == "" {
			*bin = filepath.Join(e.root, build.DefaultOut)
		}
		var err error
		if selected, err = e.vulnsPins(*name, *version); err != nil {
			return err
		}
		if bins, err = pinBinaries(selected, *bin, provenance.Patched); err != nil {
			return err
		}
	}
	var pristineBins []vulnreport.Binary
	var pristineNote string
	if *pristine {
		var err error
		if *pristineBin == "" {
			*pristineBin = filepath.Join(e.root, release.DefaultPristineBin)
		}
		if pristineBins, err = pinBinaries(selected, *pristineBin, provenance.Released); err != nil {
			return err
		}
		if pristineNote, err = pristineToolchainNote(selected, pristineBins); err != nil {
			return err
		}
	}
	root, err := filepath.Abs(e.root)
	if err != nil {
		return err
	}
	for _, b := range bins {
		fmt.Fprintf(e.stderr, "scanning %s\n", b.Path)
	}
	r, err := vulnreport.Scan(ctx, root, bins)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := r.Write(*out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s (%s)\n", r.DB, r.Scanner)
	for _, b := range r.Binaries {
		fmt.Fprintf(e.stdout, "%s: %s\n", b.Name, b.Counts())
	}
	if len(selected) > 0 {
		// The release gate's reading: reachable with a fix (refused
		// unless its series waives it), without a fix, waived.
		waivers, err := e.seriesWaivers(selected)
		if err != nil {
			return err
		}
		for _, g := range r.Gate(func(m, id string) (string, bool) { w, ok := waivers[m+" "+id]; return w, ok }) {
			fmt.Fprintln(e.stdout, g)
		}
	}
	fmt.Fprintln(e.stdout, filepath.Join(*out, vulnreport.FolderName, vulnreport.SummaryFile))
	if !*pristine {
		return nil
	}
	for _, b := range pristineBins {
		fmt.Fprintf(e.stderr, "scanning %s\n", b.Path)
	}
	pr, err := vulnreport.Scan(ctx, root, pristineBins)
	if err != nil {
		return err
	}
	cs, err := vulnreport.Compare(pr, r)
	if err != nil {
		return err
	}
	md := vulnreport.SideBySideMarkdown(cs, pristineNote)
	path := filepath.Join(*out, vulnreport.FolderName, sideBySideFile)
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return fmt.Errorf("writing the side-by-side table %s: %w", path, err)
	}
	fmt.Fprint(e.stdout, "\n"+md)
	return nil
}

// sideBySideFile is `holdfast vulns --pristine`'s table in the report folder.
const sideBySideFile = "SIDE-BY-SIDE.md"

// pristineToolchainNote is build.PristineGoNote for every selected pin.
func pristineToolchainNote(selected []pinOf, bins []vulnreport.Binary) (string, error) {
	var lines []string
	for _, sel := range selected {
		var paths []string
		dir := pipeline.TreeDir(sel.up, sel.pin.Version, provenance.Released)
		for _, b := range bins {
			if filepath.Base(filepath.Dir(b.Path)) == dir {
				paths = append(paths, b.Path)
			}
		}
		line, err := build.PristineGoNote(sel.up.Name, sel.up.Module, sel.pin.Version, paths)
		if err != nil {
			return "", err
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), nil
}

// argBinaries are the BINARY arguments, each with the version --main-version
// gives its main module (read from its build information; a file that has
// none is left for the scan to refuse, by name).
func argBinaries(paths []string, mainVersions string) ([]vulnreport.Binary, error) {
	versions := map[string]string{}
	for _, mv := range splitList(mainVersions) {
		mod, v, ok := strings.Cut(mv, "@")
		if !ok || mod == "" || !semver.IsValid(v) {
			return nil, fmt.Errorf("%w: --main-version %q: want MODULE@VERSION, e.g. github.com/karmada-io/karmada@v1.18.2", errUsage, mv)
		}
		versions[mod] = v
	}
	used := map[string]bool{}
	var bins []vulnreport.Binary
	for _, path := range paths {
		b := vulnreport.Binary{Path: path}
		if bi, err := buildinfo.ReadFile(path); err == nil {
			b.MainVersion = versions[bi.Main.Path]
			used[bi.Main.Path] = true
		}
		bins = append(bins, b)
	}
	for mod := range versions {
		if !used[mod] {
			return nil, fmt.Errorf("%w: --main-version names %s, the main module of none of the binaries", errUsage, mod)
		}
	}
	return bins, nil
}

// pinOf is one pin a scan covers.
type pinOf struct {
	up  *pins.Upstream
	pin pins.Pin
}

// vulnsPins are the pins `holdfast vulns` scans: every upstream's default
// pin, or the one --upstream and --version name (a pin that is not the
// default one is checked the same way before its series ships).
func (e *env) vulnsPins(name, version string) ([]pinOf, error) {
	if name != "" {
		up, selected, err := e.selectPins(name, version, false)
		if err != nil {
			return nil, err
		}
		return []pinOf{{up, selected[0]}}, nil
	}
	f, err := e.pinFile()
	if err != nil {
		return nil, err
	}
	var out []pinOf
	for _, up := range f.Upstreams {
		pin, err := up.Pin("")
		if err != nil {
			return nil, err
		}
		out = append(out, pinOf{up, pin})
	}
	return out, nil
}

// pinBinaries lists the binaries of kind of the selected pins in bin, each
// with its pin's version for its main module.
func pinBinaries(selected []pinOf, bin string, kind provenance.Kind) ([]vulnreport.Binary, error) {
	var bins []vulnreport.Binary
	for _, sel := range selected {
		up, pin := sel.up, sel.pin
		dir := filepath.Join(bin, pipeline.TreeDir(up, pin.Version, kind))
		for _, pkg := range up.Build {
			path := filepath.Join(dir, up.BinaryName(pkg))
			if _, err := os.Stat(path); err != nil {
				return nil, fmt.Errorf("binary %s of %s %s: %v; build it first (make binaries, or holdfast build --upstream %s --version %s; released twins: with --released --toolchain upstream --bin %s)",
					path, up.Name, pin.Version, err, up.Name, pin.Version, bin)
			}
			bins = append(bins, vulnreport.Binary{Path: path, MainVersion: pin.Version})
		}
	}
	return bins, nil
}

// seriesWaivers are the waivers of the selected pins' series, keyed by
// "MAIN-MODULE ID", with the blocker and what ends each.
func (e *env) seriesWaivers(selected []pinOf) (map[string]string, error) {
	c := e.config("")
	out := map[string]string{}
	for _, sel := range selected {
		in, err := c.LoadInputs(sel.up, sel.pin.Series)
		if err != nil {
			return nil, err
		}
		for _, w := range in.Waivers {
			out[sel.up.Module+" "+w.ID] = w.Blocker + ": " + w.Why + " (ends when " + w.EndsWhen + ")"
		}
	}
	return out, nil
}
