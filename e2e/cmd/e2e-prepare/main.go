package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/node"
	"github.com/holdfast-dist/holdfast/internal/harness/standin"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-prepare:", err)
		os.Exit(1)
	}
}

// step is one thing to build, named for the log; early steps are what a
// suite on a control plane or on the node needs at its start.
type step struct {
	name  string
	early bool
	do    func(ctx context.Context, root string) error
}

// Phases select steps: every one, the early ones (what the control-plane,
// node, worker and estimator suites start on), or the late ones (the tools
// only the signing, vulnerability, release, tool and chart tests use). A
// test that needs a tool still building waits on the tool cache's lock.
const (
	phaseAll   = "all"
	phaseEarly = "early"
	phaseLate  = "late"
)

// steps are in the order the suites need them: every suite on a control
// plane starts with etcd and kube-apiserver (the node's programs are built
// with it); the Karmada control plane then needs the unshipped
// components, the node's Karmada scenario its stand-ins and helm. The
// late steps follow: the vulnerability and signing suites' govulncheck,
// database and cosign first, then the rest of the tool cache (the tool
// test builds every tool).
func steps() []step {
	var s []step
	tool := func(t toolcache.Tool, early bool) step {
		return step{t.Name + " " + t.Version, early, func(ctx context.Context, root string) error {
			_, err := toolcache.Ensure(ctx, root, t)
			return err
		}}
	}
	early := []toolcache.Tool{toolcache.KubeAPIServer, toolcache.Etcd}
	for _, t := range early {
		s = append(s, tool(t, true))
	}
	for _, b := range []karmadacp.Build{karmadacp.Patched, karmadacp.Pristine} {
		s = append(s, step{"karmada's unshipped components (" + string(b) + ")", true, func(ctx context.Context, root string) error {
			_, err := karmadacp.EnsureBinaries(ctx, root, b, nil)
			return err
		}})
	}
	// The node suite builds these itself at its start, the post-renderer
	// before the Karmada chart's install: compiled here, with the flags
	// the suite uses (node.BuildPrograms), its builds are a link each.
	// Static and -trimpath, they share no compiled package with holdfast's
	// other builds: about 2 CPU-minutes cold.
	s = append(s, step{"the node suite's programs (pause, probe, helm post-renderer)", true, func(ctx context.Context, root string) error {
		dir, err := os.MkdirTemp("", "e2e-prepare-node-programs-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		return node.BuildPrograms(ctx, root, dir, nodePrograms...)
	}})
	s = append(s, step{"the node suite's stand-in images", true, func(ctx context.Context, root string) error {
		_, err := standin.Build(ctx, standin.Options{Root: root, Trees: pipeline.Config{Out: filepath.Join(root, standin.NodeSuiteTrees)}})
		return err
	}})
	s = append(s, tool(toolcache.Helm, true))
	early = append(early, toolcache.Helm)
	// govulncheck and its database first: the vulnerability suite bounds
	// its wait for them (20 min), the signing and release suites' wait for
	// cosign is bounded by go test's timeout only.
	late := []toolcache.Tool{toolcache.Govulncheck, toolcache.VulnDBIndex, toolcache.Cosign}
	for _, t := range toolcache.Tools {
		if !slices.ContainsFunc(early, func(f toolcache.Tool) bool { return f.Name == t.Name }) &&
			!slices.ContainsFunc(late, func(f toolcache.Tool) bool { return f.Name == t.Name }) {
			late = append(late, t)
		}
	}
	for _, t := range late {
		s = append(s, tool(t, false))
	}
	return s
}

// nodePrograms are the packages the node suite builds with
// node.BuildPrograms: the node's pause (internal/harness/node), the probe
// pods' program and the Karmada scenario's helm post-renderer (e2e/node).
var nodePrograms = []string{"./internal/harness/node/pause", "./e2e/node/probe", "./e2e/node/auditrender"}

// inPhase reports whether phase runs st.
func inPhase(phase string, st step) bool {
	return phase == phaseAll || (phase == phaseEarly) == st.early
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("e2e-prepare", flag.ContinueOnError)
	root := fs.String("root", "", "repository root (default: found from the working directory)")
	list := fs.Bool("list", false, "print what it builds, in order, and build nothing")
	phase := fs.String("phase", phaseAll, "which steps: "+phaseAll+", "+phaseEarly+" (what the suites on a control plane or the node start on) or "+phaseLate+" (the tools only the signing, vulnerability, release, tool and chart tests use)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch *phase {
	case phaseAll, phaseEarly, phaseLate:
	default:
		return fmt.Errorf("-phase %q: want %s, %s or %s", *phase, phaseAll, phaseEarly, phaseLate)
	}
	if *list {
		for _, s := range steps() {
			if inPhase(*phase, s) {
				fmt.Fprintln(out, s.name)
			}
		}
		return nil
	}
	if *root == "" {
		r, err := toolcache.Root()
		if err != nil {
			return err
		}
		*root = r
	}
	begin := time.Now()
	for _, s := range steps() {
		if !inPhase(*phase, s) {
			continue
		}
		start := time.Now()
		if err := s.do(ctx, *root); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(out, "e2e-prepare: %s ready (%s)\n", s.name, time.Since(start).Round(time.Second))
	}
	fmt.Fprintf(out, "e2e-prepare: %s steps done in %s\n", *phase, time.Since(begin).Round(time.Second))
	return nil
}
