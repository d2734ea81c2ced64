package main

import (
	"strings"
	"testing"
)

func TestImagesUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"images"}, "want `images build` or `images push`"},
		{[]string{"images", "run"}, `unknown images command "run"`},
		{[]string{"images", "build", "--platforms", "linux"}, `--platforms: platform "linux": want os/arch`},
		{[]string{"images", "build", "--platforms", "linux/amd64,linux/amd64"}, "linux/amd64 is listed twice"},
		{[]string{"images", "build", "--version", "v1.18.2"}, "--version needs --upstream"},
		{[]string{"images", "push"}, "--registry is required"},
		{[]string{"images", "push", "--registry", "r.example", "--insecure", "--plain-http"}, "--insecure and --plain-http exclude each other"},
		{[]string{"images", "push", "--registry", "r.example", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

func TestImagesPushWithoutBuild(t *testing.T) {
	root := fixture(t).Config.Root
	code, _, stderr := runCLI(t, "images", "push", "--root", root, "--registry", "127.0.0.1:1/x", "--upstream", "up")
	if code != 1 || !strings.Contains(stderr, "no image of up v1.2.0 in ") || !strings.Contains(stderr, "run `holdfast images build --upstream up` first") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

func TestImagesBuildWithoutSpec(t *testing.T) {
	root := fixture(t).Config.Root
	// The synthetic upstream has no image conventions in
	// internal/pipeline/image.
	code, _, stderr := runCLI(t, "images", "build", "--root", root, "--upstream", "up")
	if code != 1 || !strings.Contains(stderr, `upstream "up" has no image spec`) {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}
