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

// step is one thing to build, named for the log.
type step struct {
	name string
	do   func(ctx context.Context, root string) error
}

// steps are in the order the suites need them: every suite on a control
// plane starts with etcd and kube-apiserver (the node's programs are built
// with it), the signing and vulnerability suites with cosign and
// govulncheck; the Karmada control plane then needs the unshipped
// components, and the node's Karmada scenario its stand-ins last.
func steps() []step {
	var s []step
	tool := func(t toolcache.Tool) step {
		return step{t.Name + " " + t.Version, func(ctx context.Context, root string) error {
			_, err := toolcache.Ensure(ctx, root, t)
			return err
		}}
	}
	first := []toolcache.Tool{toolcache.KubeAPIServer, toolcache.Etcd, toolcache.Cosign, toolcache.Govulncheck, toolcache.VulnDBIndex}
	for _, t := range first {
		s = append(s, tool(t))
	}
	for _, b := range []karmadacp.Build{karmadacp.Patched, karmadacp.Pristine} {
		s = append(s, step{"karmada's unshipped components (" + string(b) + ")", func(ctx context.Context, root string) error {
			_, err := karmadacp.EnsureBinaries(ctx, root, b, nil)
			return err
		}})
	}
	s = append(s, step{"the node suite's stand-in images", func(ctx context.Context, root string) error {
		_, err := standin.Build(ctx, standin.Options{Root: root, Trees: pipeline.Config{Out: filepath.Join(root, standin.NodeSuiteTrees)}})
		return err
	}})
	// The rest of the tool cache (the tool test builds every tool).
	for _, t := range toolcache.Tools {
		if !slices.ContainsFunc(first, func(f toolcache.Tool) bool { return f.Name == t.Name }) {
			s = append(s, tool(t))
		}
	}
	return s
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("e2e-prepare", flag.ContinueOnError)
	root := fs.String("root", "", "repository root (default: found from the working directory)")
	list := fs.Bool("list", false, "print what it builds, in order, and build nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *list {
		for _, s := range steps() {
			fmt.Fprintln(out, s.name)
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
		start := time.Now()
		if err := s.do(ctx, *root); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(out, "e2e-prepare: %s ready (%s)\n", s.name, time.Since(start).Round(time.Second))
	}
	fmt.Fprintf(out, "e2e-prepare: done in %s\n", time.Since(begin).Round(time.Second))
	return nil
}
