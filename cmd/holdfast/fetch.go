package main

import (
	"context"
	"fmt"
)

// runFetch downloads and verifies one pin's pristine source and prints
// where it is (read-only, in the module cache).
func runFetch(ctx context.Context, e *env, args []string) error {
	fs := e.flags("fetch")
	name := fs.String("upstream", "", "upstream name from pins.txt")
	version := fs.String("version", "", "pinned version (default: the upstream's default pin)")
	if err := parse(fs, args); err != nil {
		return err
	}
	_, up, err := e.upstream(*name)
	if err != nil {
		return err
	}
	pin, err := up.Pin(*version)
	if err != nil {
		return err
	}
	mod, err := e.config("").Download.Fetch(ctx, up.Module, pin.Version, pin.Sum)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "verified %s %s\n", mod, mod.Sum)
	fmt.Fprintln(e.stdout, mod.Dir)
	return nil
}
