package signing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Signer runs cosign with one key or keylessly.
type Signer struct {
	// Cosign is the cosign binary (toolcache.Cosign).
	Cosign string
	// Key is a cosign private key file or a KMS URI (awskms://, gcpkms://,
	// azurekms://, hashivault://, k8s://). Empty with Keyless.
	Key string
	// Keyless signs with the ambient OIDC identity (GitHub Actions'
	// id-token), a Fulcio certificate and a Rekor entry.
	Keyless bool
	// TlogUpload also records key-based signatures in Rekor; it needs the
	// network. Keyless signatures are always recorded.
	TlogUpload bool
	// Identity is the registry and namespace images are published under
	// (ghcr.io/holdfast-dist): the signature payload's docker-reference
	// names Identity/<image> rather than the loopback registry used while
	// signing.
	Identity string
	// Env is cosign's environment; nil means this process's. COSIGN_PASSWORD
	// must be set in it for a key file (empty for a key without password).
	Env []string
	// Log receives one line per cosign run.
	Log io.Writer
}

// Mode says how the signatures can be verified, for the release notes.
func (s *Signer) Mode() string {
	if s.Keyless {
		return "keyless (Fulcio certificate of the release workflow's OIDC identity, Rekor entry)"
	}
	if s.TlogUpload {
		return "key " + keyName(s.Key) + " (recorded in Rekor)"
	}
	return "key " + keyName(s.Key) + " (offline: not recorded in a transparency log)"
}

func keyName(k string) string {
	if isKMS(k) {
		return k
	}
	return "file"
}

func isKMS(k string) bool {
	for _, p := range []string{"awskms://", "gcpkms://", "azurekms://", "hashivault://", "k8s://", "pkcs11:"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Validate says what is missing before anything is built or signed.
func (s *Signer) Validate() error {
	switch {
	case s.Keyless && s.Key != "":
		return errors.New("signing: a key and keyless were both asked for; choose one")
	case !s.Keyless && s.Key == "":
		return errors.New("signing: no key (SIGNING_KEY=cosign.key or a KMS URI) and not keyless (SIGNING=keyless)")
	case s.Cosign == "":
		return errors.New("signing: no cosign binary")
	}
	if s.Key != "" && !isKMS(s.Key) {
		fi, err := os.Stat(s.Key)
		if err != nil {
			return fmt.Errorf("signing key: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("signing key %s is not a file", s.Key)
		}
		if _, ok := lookupEnv(s.env(), "COSIGN_PASSWORD"); !ok {
			return fmt.Errorf("signing key %s: COSIGN_PASSWORD is not set (cosign would prompt for it; set it, empty for a key without a password)", s.Key)
		}
	}
	return nil
}

func (s *Signer) env() []string {
	if s.Env != nil {
		return s.Env
	}
	return os.Environ()
}

func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// signFlags are the flags every signing subcommand takes.
func (s *Signer) signFlags() []string {
	if s.Keyless {
		return []string{"--yes"}
	}
	return []string{"--yes", "--key", s.Key, fmt.Sprintf("--tlog-upload=%t", s.TlogUpload)}
}

// run runs cosign. Its output is kept and quoted only on failure: cosign
// prints no secret (the password is read from the environment), but it is
// chatty on success.
func (s *Signer) run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, s.Cosign, args...)
	cmd.Env = s.env()
	cmd.Stdin = nil // never a terminal: cosign must not prompt
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if s.Log != nil {
		fmt.Fprintf(s.Log, "cosign %s\n", strings.Join(args, " "))
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cosign %s: %w\n%s", args[0], err, tail(out.String(), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// PublicKey returns the public half of the key (`cosign public-key`), for
// the release folder's cosign.pub. Keyless signing has none.
func (s *Signer) PublicKey(ctx context.Context) ([]byte, error) {
	if s.Keyless {
		return nil, nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, s.Cosign, "public-key", "--key", s.Key)
	cmd.Env = s.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cosign public-key: %w\n%s", err, tail(stderr.String(), 2000))
	}
	return out, nil
}
