package karmada

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
)

// The fields of what Karmada's `version` subcommand prints:
// `<cmd> version: version.Info{GitVersion:"v1.18.2", GitCommit:"...", ...}`.
var (
	gitVersionField = regexp.MustCompile(`GitVersion:"([^"]*)"`)
	gitCommitField  = regexp.MustCompile(`GitCommit:"([^"]*)"`)
)

// ParseKarmadaVersion extracts "GitVersion (GitCommit)" from the output of
// a Karmada binary's `version` subcommand; the commit is left out when the
// binary has none (a pristine build sets only upstream's version).
func ParseKarmadaVersion(out string) (string, error) {
	m := gitVersionField.FindStringSubmatch(out)
	if m == nil || m[1] == "" {
		return "", fmt.Errorf("no GitVersion in version output %q", out)
	}
	if c := gitCommitField.FindStringSubmatch(out); c != nil && c[1] != "" {
		return fmt.Sprintf("%s (%s)", m[1], c[1]), nil
	}
	return m[1], nil
}

// BinaryVersion runs `path version` (Karmada binaries have a version
// subcommand, not a --version flag) and parses what it prints.
func BinaryVersion(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w: %s", path, err, out)
	}
	v, err := ParseKarmadaVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
