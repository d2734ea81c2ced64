package pristine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"
)

// Module is one module version as `go mod download -json` reports it.
type Module struct {
	Path    string
	Version string
	// Dir is the extracted source in the module cache: read it, never write it.
	Dir string
	// Sum is the h1: hash of the module, checked against the checksum
	// database when the go command first downloaded it.
	Sum   string
	GoMod string
	Error string
}

// String returns module@version.
func (m Module) String() string { return m.Path + "@" + m.Version }

// Downloader fetches module versions with the go command.
type Downloader struct {
	// Go is the go command to run; empty means "go" from PATH.
	Go string
	// Env is appended to the environment of the go command, e.g. to point
	// GOPROXY and GOMODCACHE somewhere else in tests. It is checked like the
	// environment: it cannot turn the checksum database off either.
	Env []string
	// ChecksumDB is the GOSUMDB value ("name+key URL") of the checksum
	// database to consult instead of sum.golang.org. Only tests set it, to
	// the local database of internal/modproxytest; it cannot be set from the
	// environment and cannot be "off".
	ChecksumDB string
}

// Download runs `go mod download -json path@version` and returns its answer.
// It runs outside any module (in an empty temporary folder, GOWORK=off) so
// that the caller's go.mod and go.sum are neither consulted nor changed, and
// with no go.sum the go command consults the checksum database on every
// download, also of a module already in the cache. No setting may turn that
// off (see checksumEnv): the Sum it returns is the database's.
func (d Downloader) Download(ctx context.Context, path, version string) (Module, error) {
	target := path + "@" + version
	dir, err := os.MkdirTemp("", "holdfast-download-")
	if err != nil {
		return Module{}, err
	}
	defer os.RemoveAll(dir)

	goCmd := d.Go
	if goCmd == "" {
		goCmd = "go"
	}
	if d.ChecksumDB == "off" {
		return Module{}, fmt.Errorf("go mod download %s: the checksum database cannot be turned off", target)
	}
	env, err := d.checksumEnv(ctx, goCmd, dir, path, append(append(os.Environ(), "GOWORK=off"), d.Env...))
	if err != nil {
		return Module{}, fmt.Errorf("go mod download %s: %w", target, err)
	}
	cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", target)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var m Module
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		if runErr != nil {
			return Module{}, fmt.Errorf("go mod download %s: %v: %s", target, runErr, strings.TrimSpace(stderr.String()))
		}
		return Module{}, fmt.Errorf("go mod download %s: reading its JSON answer: %v", target, err)
	}
	if m.Error != "" {
		return Module{}, fmt.Errorf("go mod download %s: %s", target, m.Error)
	}
	if runErr != nil {
		return Module{}, fmt.Errorf("go mod download %s: %v: %s", target, runErr, strings.TrimSpace(stderr.String()))
	}
	if m.Dir == "" || m.Sum == "" {
		return Module{}, fmt.Errorf("go mod download %s: answer has no Dir or Sum", target)
	}
	return m, nil
}

// Verify checks the downloaded module against want, the h1: hash the pin
// records: first the hash the go command reports, then a fresh hash of the
// extracted folder.
func Verify(m Module, want string) error {
	if m.Sum != want {
		return fmt.Errorf("%s: the go command reports %s but the pin says %s; refusing to use it (a wrong pin, or a proxy serving different content with checksum checks turned off)", m, m.Sum, want)
	}
	got, err := dirhash.HashDir(m.Dir, m.String(), dirhash.Hash1)
	if err != nil {
		return fmt.Errorf("%s: hashing %s: %w", m, m.Dir, err)
	}
	if got != want {
		return fmt.Errorf("%s: the extracted source in %s hashes to %s but the pin says %s: the module cache was modified after download; refusing to use it (remove it with `go clean -modcache` and run again)", m, m.Dir, got, want)
	}
	return nil
}

// Fetch downloads path@version and verifies it against want.
func (d Downloader) Fetch(ctx context.Context, path, version, want string) (Module, error) {
	m, err := d.Download(ctx, path, version)
	if err != nil {
		return Module{}, err
	}
	if err := Verify(m, want); err != nil {
		return Module{}, err
	}
	return m, nil
}
