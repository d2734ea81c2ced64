package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// runVersion prints what holdfast itself was built from.
func runVersion(_ context.Context, e *env, args []string) error {
	if err := parse(e.flags("version"), args); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(e.stdout, "holdfast (no build information)")
		return nil
	}
	line := fmt.Sprintf("holdfast %s %s", info.Main.Version, info.GoVersion)
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			line += fmt.Sprintf(" %s=%s", s.Key, s.Value)
		}
	}
	fmt.Fprintln(e.stdout, line)
	return nil
}
