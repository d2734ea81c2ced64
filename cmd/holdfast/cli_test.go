package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// TestRootBeforeTheVerb: usage says "every command takes --root"; a user
// puts it first as often as after the verb.
func TestRootBeforeTheVerb(t *testing.T) {
	fx := fixture(t)
	root := fx.Config.Root
	for _, args := range [][]string{
		{"--root", root, "pins", "list"},
		{"--root=" + root, "pins", "list"},
		{"-root", root, "pins", "list", "--upstream", "up"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stdout != "up v1.2.0 patches/up/1.2 default\n" {
			t.Errorf("holdfast %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	// The verb's own --root wins over the one before it.
	code, _, stderr := runCLI(t, "--root", root, "pins", "list", "--root", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "no pins.txt in") {
		t.Errorf("--root after the verb did not win: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "--root")
	if code != 2 || !strings.Contains(stderr, "--root needs a folder") {
		t.Errorf("--root alone: exit %d, %s", code, stderr)
	}
}

// TestUnknownVerbsAreNamedWithASuggestion: a typo gets the nearest verb.
func TestUnknownVerbsAreNamedWithASuggestion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rebsae"}, `holdfast: unknown command "rebsae" (did you mean "rebase"?)`},
		{[]string{"help", "imgaes"}, `holdfast help: unknown command "imgaes" (did you mean "images"?)`},
		{[]string{"frobnicate"}, `holdfast: unknown command "frobnicate" (commands: pins, fetch,`},
		{[]string{"charts", "pusj"}, `unknown charts command "pusj" (did you mean "push"?)`},
		{[]string{"images", "biuld"}, `unknown images command "biuld" (did you mean "build"?)`},
		{[]string{"pins", "lsit"}, `unknown pins command "lsit" (did you mean "list"?)`},
		{[]string{"pins", "frobnicate"}, `unknown pins command "frobnicate" (want verify or list)`},
		{[]string{"tools", "paht", "helm"}, `unknown tools command "paht" (did you mean "path"?)`},
		{[]string{"tools", "path", "hlem"}, `unknown tool "hlem" (did you mean "helm"?`},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("holdfast %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}

// TestUpstreamAcceptsTheHyphenatedName: the chart, the image and every page
// say worker-operator; pins.txt says workeroperator.
func TestUpstreamAcceptsTheHyphenatedName(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "pins", "list", "--root", root, "--upstream", "worker-operator")
	if code != 0 || !strings.HasPrefix(stdout, "workeroperator v1.") {
		t.Errorf("pins list --upstream worker-operator: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestUsageListsEveryFlag: each verb's usage lines name every flag its
// flag set defines (--help prints both).
func TestUsageListsEveryFlag(t *testing.T) {
	for _, verb := range []string{"pins verify", "pins list", "fetch", "apply", "build", "test", "rebase", "watch",
		"charts build", "charts push", "images build", "images push", "release", "vulns"} {
		code, stdout, _ := runCLI(t, append(strings.Fields(verb), "--help")...)
		if code != 0 {
			t.Errorf("%s --help: exit %d", verb, code)
			continue
		}
		usagePart, flagsPart, ok := strings.Cut(stdout, "\nflags:\n")
		if !ok {
			t.Errorf("%s --help has no flags section:\n%s", verb, stdout)
			continue
		}
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(flagsPart, -1) {
			if name := m[1]; name != "root" && !strings.Contains(usagePart, "--"+name) {
				t.Errorf("holdfast %s: usage does not list --%s:\n%s", verb, name, usagePart)
			}
		}
	}
}

// TestMakeRebaseNamesTheMissingVariable runs the Makefile's check (it
// stops before holdfast runs).
func TestMakeRebaseNamesTheMissingVariable(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		vars []string
		want string
	}{
		{[]string{"UPSTREAM=karmada"}, "make rebase: VERSION is not set"},
		{[]string{"VERSION=v1.18.3"}, "make rebase: UPSTREAM is not set"},
	} {
		cmd := exec.Command("make", append([]string{"-s", "-C", root, "rebase"}, tt.vars...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("make rebase %s: %v\n%s\nwant a failure saying %q", strings.Join(tt.vars, " "), err, out, tt.want)
		}
	}
}
