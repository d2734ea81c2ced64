// Command holdfast is the distribution's build tool: it verifies the pins,
// fetches pristine upstream source, lays holdfast's libraries, overlay and
// patch series onto it, and reports how the series fares on a new upstream
// version. hack/apply-patches.sh and the Makefile call it; see
// docs/pipeline.md.
//
// Usage:
//
//	holdfast pins verify [--upstream NAME]
//	holdfast pins list   [--upstream NAME] [--json]
//	holdfast fetch   --upstream NAME [--version V]
//	holdfast apply   --upstream NAME [--version V | --all] [--out DIR] [--patched-only]
//	holdfast build   --upstream NAME [--version V | --all] [--bin DIR] [--pristine | --released [--toolchain GO]] [--only BIN,...]
//	holdfast test    --upstream NAME [--version V | --all] [--reports DIR]
//	holdfast rebase  --upstream NAME --version V [--series DIR] [--update-pins] [--out DIR]
//	holdfast watch   [--upstream NAME] [--pre-releases] [--out DIR]
//	holdfast charts  build [--out DIR] [--helm PATH] [--images DIR | --tags]
//	holdfast charts  push --registry R [--plain-http] [--out DIR] [--helm PATH]
//	holdfast images  build [--upstream NAME [--version V]] [--platforms LIST] [--only BIN,...] [--registry R] [--out DIR] [--bin DIR] [--trees DIR]
//	holdfast images  push --registry R [--upstream NAME [--version V]] [--only BIN,...] [--out DIR] [--insecure | --plain-http]
//	holdfast release --version V [--out DIR] [--sign-key KEY | --keyless | --unsigned] [--tlog-upload] [--identity R] [--pristine-bin DIR] [--preflight]
//	holdfast vulns   [--out DIR] [--bin DIR [--upstream NAME [--version V]] [--pristine [--pristine-bin DIR]] | [--main-version MODULE@V,...] BINARY...]
//	holdfast tools   key | path NAME
//	holdfast version | --version
//	holdfast help [COMMAND [SUBCOMMAND]]   (or holdfast COMMAND --help)
//
// Every command takes --root (the repository, default "."), after the
// verb or before it. Results (what
// was built and where, reports, refs, summary lines) go to stdout, so a
// script can read them; steps, go command lines and, while a long go build
// or go test runs, a heartbeat line every 30 seconds go to stderr. Help
// that was asked for goes to stdout. Exit status is 0 on success, 1 when
// the work failed (a pin that does not verify, a patch that does not
// apply, a rebase with conflicts), 2 on a usage error. watch is the
// exception that proves the rule: a new tag that conflicts is what it
// reports, not a failure, so it exits 1 only when it could not list or
// try a tag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
)

// errUsage marks an error that should be followed by usage and exit 2.
var errUsage = errors.New("usage")

const usage = `usage:
  holdfast pins verify [--upstream NAME]                 check every pin: download, h1:, series headers
  holdfast pins list [--upstream NAME] [--json]          list the pins (--json: one line, for a CI matrix)
  holdfast fetch   --upstream NAME [--version V]         download and verify pristine source; print its folder
  holdfast apply   --upstream NAME [--version V | --all] build patched and pristine trees under _output/trees
                   [--out DIR] [--patched-only]
  holdfast build   --upstream NAME [--version V | --all] apply, then build the binaries with provenance
                   [--bin DIR] [--pristine | --released]  (into _output/bin/NAME-VERSION[-pristine|-released];
                   [--only BIN,...]                       pristine: upstream's code on the series' dependency
                   [--toolchain GO]                       versions; released: upstream's release as published)
                                                          (--toolchain, with --released: the Go to build it with)
  holdfast test    --upstream NAME [--version V | --all] apply, then run the tests; RED/GREEN report
                   [--reports DIR]                       (Markdown and JSON under _output/reports)
  holdfast rebase  --upstream NAME --version V           try the series on another upstream version
                   [--series DIR] [--update-pins]        (report also as text and JSON under _output/rebase)
                   [--out DIR]
  holdfast watch   [--upstream NAME] [--pre-releases]    list upstream tags newer than the pins (module proxy),
                   [--out DIR]                           rebase onto each; report under _output/watch
                                                         (exit 0 whatever the verdicts; 1 if a tag could not be tried)
  holdfast charts  build [--out DIR] [--helm PATH]       package the Helm charts of the default pins
                   [--images DIR | --tags]               (into _output/charts), pinned to the digests of the
                                                         images in _output/images when built there
  holdfast charts  push --registry R [--plain-http]      push them to an OCI registry
                   [--out DIR] [--helm PATH]
  holdfast images  build [--upstream NAME [--version V]] cross-build and assemble the images: OCI layout,
                   [--platforms linux/amd64,linux/arm64] docker tarball per platform, SBOM
                   [--only BIN,...] [--registry R]       (into _output/images/NAME-VERSION)
                   [--out DIR] [--bin DIR] [--trees DIR]
  holdfast images  push --registry R [--upstream NAME]   push them (index + SBOM) to R/BINARY:VERSION
                   [--version V] [--only BIN,...] [--out DIR] [--insecure | --plain-http]
  holdfast release --version V [--out DIR]               assemble _output/release/V from the built artifacts
                   [--sign-key KEY | --keyless]          (refuses a dirty tree or a failing report);
                   [--unsigned] [--tlog-upload]          --preflight: only the checks that need no artifact;
                   [--identity REGISTRY/NS]              --pristine-bin: twins for the notes' side-by-side table
                   [--pristine-bin DIR] [--preflight]
  holdfast vulns   [--out DIR] [--bin DIR]               scan the default pins' binaries (in _output/bin) with govulncheck,
                   [--upstream NAME [--version V]]       or one pin's, or the BINARY files, offline against the pinned
                   [--pristine [--pristine-bin DIR]]     vulndb snapshot; report in DIR/vulnerabilities (default
                   [--main-version MODULE@V,...]         _output/reports); --pristine: with upstream's counts beside
                   [BINARY...]                           (twins in _output/bin-upstream-go, make upstream-go-twins)
                                                         (exit 0 whatever is found; 1 if a binary could not be scanned)
  holdfast tools   key                                   the cache key of .cache/tools (tool definitions + Go version)
  holdfast tools   path NAME                             build a tool into .cache/tools once; print its path
                                                         (etcd, kube-apiserver, helm, actionlint,
                                                         govulncheck, vulndb-indexdb, cosign, controller-gen, gremlins)
  holdfast version | --version                           print what holdfast was built from
  holdfast help [COMMAND [SUBCOMMAND]]                   a command's usage and flags (or: holdfast COMMAND --help)
common flags: --root DIR (holdfast repository, default ".")
results go to stdout; steps, progress and errors to stderr
`

type command struct {
	name string
	run  func(ctx context.Context, env *env, args []string) error
}

var commands = []command{
	{"pins", runPins},
	{"fetch", runFetch},
	{"apply", runApply},
	{"build", runBuild},
	{"test", runTest},
	{"rebase", runRebase},
	{"watch", runWatch},
	{"charts", runCharts},
	{"images", runImages},
	{"release", runRelease},
	{"vulns", runVulns},
	{"tools", runTools},
	{"version", runVersion},
}

// env is what every command needs: where things are and where to write.
// stdout carries results only (paths of what was built, reports, refs,
// summary lines) so that a script can read them; steps, go command lines
// and heartbeats go to stderr.
type env struct {
	stdout, stderr io.Writer
	root           string
	// rootDefault is --root given before the verb, else ".".
	rootDefault string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// --root may come before the verb too; the verb's own --root wins.
	root, args, err := leadingRoot(args)
	if err != nil {
		fmt.Fprintf(stderr, "holdfast: %v\n", err)
		return 2
	}
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, usage)
		return 2
	case isHelp(args[0]) || args[0] == "help" && (len(args) == 1 || args[1] == "help" || isHelp(args[1])):
		fmt.Fprint(stdout, usage)
		return 0
	case args[0] == "help":
		if !known(args[1]) {
			fmt.Fprintf(stderr, "holdfast help: unknown command %q (%s)\n", args[1], suggest(args[1], commandNames(), "commands: "))
			return 2
		}
		return run(ctx, append(args[1:len(args):len(args)], "--help"), stdout, stderr)
	case args[0] == "--version" || args[0] == "-version":
		args = append([]string{"version"}, args[1:]...)
	case len(args) == 2 && isHelp(args[1]) && hasSubcommands[args[0]]:
		// The flags are the subcommand's: list the subcommands.
		fmt.Fprintf(stdout, "usage:\n%s", verbUsage(args[0]))
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, &env{stdout: stdout, stderr: stderr, rootDefault: root}, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "holdfast %s: %v\nusage:\n%sits flags: holdfast help %s\n", args[0], err, verbUsage(args[0]), args[0])
			return 2
		default:
			fmt.Fprintf(stderr, "holdfast %s: %v\n", args[0], err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "holdfast: unknown command %q (%s)\n%s", args[0], suggest(args[0], commandNames(), "commands: "), usage)
	return 2
}

// hasSubcommands are the commands whose flags belong to a subcommand.
var hasSubcommands = map[string]bool{"pins": true, "charts": true, "images": true, "tools": true}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func known(name string) bool {
	return name == "help" || slices.Contains(commandNames(), name)
}

func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// verbUsage is the part of usage about name ("images" or "images build"):
// each matching "holdfast ..." line with the lines that continue it.
func verbUsage(name string) string {
	want := strings.Fields(name)
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(usage, "\n") {
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "  holdfast "):
			in = len(fields) > len(want) && slices.Equal(fields[1:1+len(want)], want)
		case !strings.HasPrefix(line, "   "):
			in = false
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// flagSet is a command's flag set and where its help goes.
type flagSet struct {
	*flag.FlagSet
	help io.Writer
}

// flags returns a flag set with the common flags bound to e.
func (e *env) flags(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// A bad flag is reported once, by run, with the command's usage on
	// stderr; help that was asked for is printed by parse, on stdout.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	def := e.rootDefault
	if def == "" {
		def = "."
	}
	fs.StringVar(&e.root, "root", def, "holdfast repository root")
	return &flagSet{FlagSet: fs, help: e.stdout}
}

func parse(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(fs.help, "usage:\n%sflags:\n", verbUsage(fs.Name()))
			fs.SetOutput(fs.help)
			fs.PrintDefaults()
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

func (e *env) pinFile() (*pins.File, error) {
	path := filepath.Join(e.root, pins.FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no %s in %s: run from the repository root or pass --root", pins.FileName, e.root)
	}
	return pins.Load(path)
}

func (e *env) upstream(name string) (*pins.File, *pins.Upstream, error) {
	if name == "" {
		return nil, nil, fmt.Errorf("%w: --upstream is required", errUsage)
	}
	f, err := e.pinFile()
	if err != nil {
		return nil, nil, err
	}
	up, err := f.Upstream(name)
	return f, up, err
}

func (e *env) config(out string) pipeline.Config {
	if out == "" {
		out = filepath.Join(e.root, pipeline.DefaultOut)
	}
	return pipeline.Config{Root: e.root, Out: out, Log: e.stderr, Download: pristine.Downloader{ChecksumDB: checksumDB}}
}

// checksumDB is the checksum database pins are checked against: empty, so
// sum.golang.org, except in this package's tests, which point it at their
// local database. A variable rather than a flag or an environment variable,
// so that nothing a user sets can change it.
var checksumDB string

// leadingRoot takes a --root DIR (or -root, --root=DIR) placed before the
// verb off args.
func leadingRoot(args []string) (root string, rest []string, err error) {
	if len(args) == 0 {
		return "", args, nil
	}
	name, value, hasValue := strings.Cut(args[0], "=")
	if name != "--root" && name != "-root" {
		return "", args, nil
	}
	if hasValue {
		rest = args[1:]
	} else if len(args) > 1 {
		value, rest = args[1], args[2:]
	}
	if value == "" {
		return "", nil, errors.New("--root needs a folder: holdfast --root DIR COMMAND ...")
	}
	return value, rest, nil
}

// unknownSub is the usage error for a sub-verb of verb that is none of subs.
func unknownSub(verb, got string, subs ...string) error {
	return fmt.Errorf("%w: unknown %s command %q (%s)", errUsage, verb, got, suggest(got, subs, "want "))
}

// suggest names the candidate nearest to got when it is a likely typo (at
// most a third of its letters off, at least one), else lists them all after
// prefix.
func suggest(got string, candidates []string, prefix string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(got, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD >= 0 && bestD <= max(1, len(best)/3) {
		return fmt.Sprintf("did you mean %q?", best)
	}
	if prefix == "want " {
		return prefix + strings.Join(candidates, " or ")
	}
	return prefix + strings.Join(candidates, ", ")
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment) between a and b: a swap of two neighbours ("rebsae") costs one.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
