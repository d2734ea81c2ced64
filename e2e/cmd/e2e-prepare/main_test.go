package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestPhasesSplitTheList: the early and late phases are the whole list,
// in its order, with no step in both; the early phase is what the suites
// on a control plane and the node start on (kube-apiserver, etcd, the
// unshipped components, the stand-ins, helm) and nothing they do not.
func TestPhasesSplitTheList(t *testing.T) {
	list := func(phase string) []string {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-list", "-phase", phase}, &out); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	all, early, late := list(phaseAll), list(phaseEarly), list(phaseLate)
	if got := append(append([]string{}, early...), late...); strings.Join(got, "|") != strings.Join(all, "|") {
		t.Errorf("early + late = %q, want the whole list %q", got, all)
	}
	wantEarly := []string{
		toolcache.KubeAPIServer.Name + " " + toolcache.KubeAPIServer.Version,
		toolcache.Etcd.Name + " " + toolcache.Etcd.Version,
		"karmada's unshipped components (patched)", "karmada's unshipped components (pristine)",
		"the node suite's programs (pause, probe, helm post-renderer)",
		"the node suite's stand-in images",
		toolcache.Helm.Name + " " + toolcache.Helm.Version,
	}
	if strings.Join(early, "|") != strings.Join(wantEarly, "|") {
		t.Errorf("early phase %q, want %q", early, wantEarly)
	}
	if want := toolcache.Govulncheck.Name + " " + toolcache.Govulncheck.Version; late[0] != want {
		t.Errorf("late phase starts with %q, want %q (the vulnerability suite bounds its wait for it)", late[0], want)
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"-nope"}, {"-phase", "middle"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q): no error", args)
		}
	}
}

// TestNodeProgramsAreWhatTheNodeSuiteBuilds: every package the node suite
// (e2e/node) and the node harness build with node.BuildPrograms is
// prepared, or the suite compiles its graph itself, on its critical path.
func TestNodeProgramsAreWhatTheNodeSuiteBuilds(t *testing.T) {
	built := regexp.MustCompile(`(?:goBuild|BuildPrograms)\(.*"(\./[a-z0-9/_-]+)"\)`)
	var found []string
	for _, dir := range []string{"../../node", "../../../internal/harness/node"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range built.FindAllStringSubmatch(string(data), -1) {
				found = append(found, m[1])
			}
		}
	}
	if len(found) == 0 {
		t.Fatal("found no build of a node program: has the suite's helper changed name?")
	}
	for _, pkg := range found {
		if !slices.Contains(nodePrograms, pkg) {
			t.Errorf("the node suite builds %s, which e2e-prepare does not prepare (nodePrograms %q)", pkg, nodePrograms)
		}
	}
	for _, pkg := range nodePrograms {
		if !slices.Contains(found, pkg) {
			t.Errorf("e2e-prepare prepares %s, which the node suite no longer builds", pkg)
		}
	}
}
