package pristine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Versions runs `go list -m -versions -json path` and returns the tagged
// versions the module proxy serves, in the go command's (semantic) order.
// It runs like Download: outside any module, with the environment checked
// by checksumEnv, so a setting that would route path around the proxy and
// the checksum database (GOPRIVATE, GONOSUMDB, GOSUMDB=off...) is refused
// here too rather than listing tags from somewhere a later download would
// not be checked against. The list itself is not in the checksum database;
// every version picked from it is checked when Download fetches it.
func (d Downloader) Versions(ctx context.Context, path string) ([]string, error) {
	dir, err := os.MkdirTemp("", "holdfast-versions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	goCmd := d.Go
	if goCmd == "" {
		goCmd = "go"
	}
	if d.ChecksumDB == "off" {
		return nil, fmt.Errorf("go list -m -versions %s: the checksum database cannot be turned off", path)
	}
	env, err := d.checksumEnv(ctx, goCmd, dir, path, append(append(os.Environ(), "GOWORK=off"), d.Env...))
	if err != nil {
		return nil, fmt.Errorf("go list -m -versions %s: %w", path, err)
	}
	cmd := exec.CommandContext(ctx, goCmd, "list", "-m", "-versions", "-json", path)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list -m -versions %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	var m struct {
		Path     string
		Versions []string
		Error    *struct{ Err string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("go list -m -versions %s: reading its JSON answer: %v", path, err)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("go list -m -versions %s: %s", path, m.Error.Err)
	}
	return m.Versions, nil
}
