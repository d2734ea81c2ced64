package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// TestListCoversWhatTheSuitesBuild: every tool-cache program once (the
// tool test builds them all), kube-apiserver first (every suite on a
// control plane starts on it), both Karmada trees' unshipped components
// and the stand-ins.
func TestListCoversWhatTheSuitesBuild(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-list"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := toolcache.KubeAPIServer.Name + " " + toolcache.KubeAPIServer.Version; lines[0] != want {
		t.Errorf("first step %q, want %q", lines[0], want)
	}
	seen := map[string]int{}
	for _, l := range lines {
		seen[l]++
	}
	for _, tool := range toolcache.Tools {
		if n := seen[tool.Name+" "+tool.Version]; n != 1 {
			t.Errorf("tool %s %s is prepared %d times, want once", tool.Name, tool.Version, n)
		}
	}
	for _, want := range []string{"karmada's unshipped components (patched)", "karmada's unshipped components (pristine)", "the node suite's stand-in images"} {
		if seen[want] != 1 {
			t.Errorf("no step %q in %q", want, lines)
		}
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"-nope"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q): no error", args)
		}
	}
}
