package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
)

// TestMain resolves the shipped toolchain once, in the environment the
// tests start in: the tests then point GOPROXY and GOMODCACHE at a fake
// proxy that serves no toolchain, and build.ResolveGo answers from its
// per-process cache.
func TestMain(m *testing.M) {
	if _, err := build.ResolveGo(context.Background(), build.Toolchain); err != nil {
		fmt.Fprintf(os.Stderr, "resolving %s for the tests: %v\n", build.Toolchain, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
