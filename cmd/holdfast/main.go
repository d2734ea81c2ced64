// Command holdfast is the distribution's build tool: it verifies the pins,
// fetches pristine upstream source, lays holdfast's libraries, overlay and
// patch series onto it, and reports how the series fares on a new upstream
// version. hack/apply-patches.sh and the Makefile call it; see
// docs/pipeline.md.
//
// Usage:
//
//	holdfast pins verify [--upstream NAME]
//	holdfast fetch   --upstream NAME [--version V]
//	holdfast apply   --upstream NAME [--version V | --all] [--out DIR] [--patched-only]
//	holdfast build   --upstream NAME [--version V | --all] [--bin DIR] [--pristine] [--only BIN,...]
//	holdfast test    --upstream NAME [--version V | --all] [--reports DIR]
//	holdfast rebase  --upstream NAME --version V [--series DIR] [--update-pins]
//	holdfast charts  build [--out DIR] [--helm PATH]
//	holdfast charts  push --registry R [--plain-http] [--out DIR] [--helm PATH]
//	holdfast images  build [--upstream NAME [--version V]] [--platforms LIST] [--only BIN,...] [--registry R] [--out DIR] [--bin DIR] [--trees DIR]
//	holdfast images  push --registry R [--upstream NAME [--version V]] [--only BIN,...] [--out DIR] [--insecure | --plain-http]
//	holdfast release --version V [--out DIR]
//	holdfast version
//
// Every command takes --root (the repository, default "."). Exit status is
// 0 on success, 1 when the work failed (a pin that does not verify, a patch
// that does not apply, a rebase with conflicts), 2 on a usage error.
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
	"syscall"

	"github.com/holdfast-dist/holdfast/internal/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pristine"
)

// errUsage marks an error that should be followed by usage and exit 2.
var errUsage = errors.New("usage")

const usage = `usage:
  holdfast pins verify [--upstream NAME]                 check every pin: download, h1:, series headers
  holdfast fetch   --upstream NAME [--version V]         download and verify pristine source; print its folder
  holdfast apply   --upstream NAME [--version V | --all] build patched and pristine trees under _output/trees
                   [--out DIR] [--patched-only]
  holdfast build   --upstream NAME [--version V | --all] apply, then build the binaries with provenance
                   [--bin DIR] [--pristine] [--only BIN,...] (into _output/bin/NAME-VERSION[-pristine])
  holdfast test    --upstream NAME [--version V | --all] apply, then run the tests; RED/GREEN report
                   [--reports DIR]                       (Markdown and JSON under _output/reports)
  holdfast rebase  --upstream NAME --version V           try the series on another upstream version
                   [--series DIR] [--update-pins]
  holdfast charts  build [--out DIR] [--helm PATH]       package the Helm charts of the default pins
                                                         (into _output/charts)
  holdfast charts  push --registry R [--plain-http]      push them to an OCI registry
                   [--out DIR] [--helm PATH]
  holdfast images  build [--upstream NAME [--version V]] cross-build and assemble the images: OCI layout,
                   [--platforms linux/amd64,linux/arm64] docker tarball per platform, SBOM
                   [--only BIN,...] [--registry R]       (into _output/images/NAME-VERSION)
                   [--out DIR] [--bin DIR] [--trees DIR]
  holdfast images  push --registry R [--upstream NAME]   push them (index + SBOM) to R/BINARY:VERSION
                   [--version V] [--only BIN,...] [--out DIR] [--insecure | --plain-http]
  holdfast release --version V [--out DIR]               assemble _output/release/V from the built artifacts
                                                         (refuses a dirty tree or a failing report)
  holdfast version
common flags: --root DIR (holdfast repository, default ".")
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
	{"charts", runCharts},
	{"images", runImages},
	{"release", runRelease},
	{"version", runVersion},
}

// env is what every command needs: where things are and where to write.
type env struct {
	stdout, stderr io.Writer
	root           string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, &env{stdout: stdout, stderr: stderr}, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "holdfast %s: %v\n%s", args[0], err, usage)
			return 2
		default:
			fmt.Fprintf(stderr, "holdfast %s: %v\n", args[0], err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "holdfast: unknown command %q\n%s", args[0], usage)
	return 2
}

// flags returns a flag set with the common flags bound to e.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&e.root, "root", ".", "holdfast repository root")
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
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
	return pipeline.Config{Root: e.root, Out: out, Log: e.stdout, Download: pristine.Downloader{ChecksumDB: checksumDB}}
}

// checksumDB is the checksum database pins are checked against: empty, so
// sum.golang.org, except in this package's tests, which point it at their
// local database. A variable rather than a flag or an environment variable,
// so that nothing a user sets can change it.
var checksumDB string
