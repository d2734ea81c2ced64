package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestChartsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"charts"}, "want `charts build` or `charts push`"},
		{[]string{"charts", "deploy"}, `unknown charts command "deploy"`},
		{[]string{"charts", "push"}, "--registry is required"},
		{[]string{"charts", "build", "extra"}, `unexpected argument "extra"`},
		{[]string{"charts", "build", "--tags", "--images", "/tmp/images"}, "--tags and --images exclude each other"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// Pushing before building names the archive it wants and the command that
// makes it, without running helm (--helm is never executed here).
func TestChartsPushBeforeBuild(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, _, stderr := runCLI(t, "charts", "push", "--root", root, "--out", out, "--helm", "/nonexistent/helm",
		"--registry", "127.0.0.1:1/charts", "--plain-http")
	if code != 1 || !strings.Contains(stderr, "build the charts first (holdfast charts build)") || !strings.Contains(stderr, out) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming the missing archive", code, stderr)
	}
}
