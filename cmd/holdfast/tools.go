package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// runTools prints the cache key of the tool cache, or builds a tool into it
// (once; later calls find it) and prints its path, so that the Makefile and
// CI use the very binaries and key the tests do.
func runTools(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("%w: want `tools key` or `tools path NAME`", errUsage)
	}
	if args[0] != "key" && args[0] != "path" {
		return unknownSub("tools", args[0], "key", "path")
	}
	sub := args[0]
	fs := e.flags("tools " + sub)
	var name string
	rest := args[1:]
	if sub == "path" {
		if len(rest) == 0 || len(rest[0]) > 0 && rest[0][0] == '-' {
			if len(rest) > 0 && isHelp(rest[0]) {
				return parse(fs, rest)
			}
			return fmt.Errorf("%w: `tools path` needs a tool name (%s)", errUsage, toolNames())
		}
		name, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	root, err := filepath.Abs(e.root)
	if err != nil {
		return err
	}
	if sub == "key" {
		k, err := toolcache.Key(ctx, toolcache.Tools)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, k)
		return nil
	}
	t, ok := toolcache.Lookup(name)
	if !ok {
		return fmt.Errorf("%w: unknown tool %q (%s)", errUsage, name, suggest(name, strings.Split(toolNames(), ", "), "tools: "))
	}
	path, err := toolcache.Ensure(ctx, root, t)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

func toolNames() string {
	s := ""
	for i, t := range toolcache.Tools {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	return s
}
