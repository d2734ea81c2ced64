// Package signingtest gives tests the real cosign (built once into the tool
// cache), throwaway key pairs, and cosign runs isolated from the user's
// sigstore configuration, so a test verifies a release the way an operator
// does.
package signingtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

var (
	once    sync.Once
	path    string
	pathErr error
)

// Cosign returns the cached cosign binary, building it on first use
// (minutes on a cold Go build cache).
func Cosign(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		root, err := toolcache.Root()
		if err != nil {
			pathErr = err
			return
		}
		path, pathErr = toolcache.Ensure(ctx, root, toolcache.Cosign)
	})
	if pathErr != nil {
		t.Fatal(pathErr)
	}
	return path
}

// Env is an environment for cosign that keeps its TUF cache and config in
// dir, carries password as COSIGN_PASSWORD, and has no proxy or
// registry credentials of the user's.
func Env(dir, password string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TUF_ROOT", "DOCKER_CONFIG", "COSIGN_PASSWORD", "SIGSTORE_ROOT_FILE", "COSIGN_EXPERIMENTAL":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"TUF_ROOT="+filepath.Join(dir, "tuf"),
		"DOCKER_CONFIG="+filepath.Join(dir, "docker"),
		"COSIGN_PASSWORD="+password,
	)
}

// KeyPair makes a cosign key pair with `cosign generate-key-pair` in a new
// folder and returns the private key, the public key and the environment
// (Env) that unlocks the private key.
func KeyPair(t testing.TB, cosign string) (key, pub string, env []string) {
	t.Helper()
	dir := t.TempDir()
	env = Env(dir, "holdfast-test-password")
	if _, stderr, err := Run(env, dir, cosign, "generate-key-pair"); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, stderr)
	}
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub"), env
}

// Run runs cosign in dir: verification results go to stdout, notes and
// errors to stderr.
func Run(env []string, dir, cosign string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cosign, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
