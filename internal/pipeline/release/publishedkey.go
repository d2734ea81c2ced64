package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os/exec"
	"strings"
)

// PublishedKeyPath is where the repository holds the public key of a
// key-signed release. A user verifies against this file at a commit they
// trust (docs/verifying.md), never against the cosign.pub the release
// folder carries: a copy travelling with what it verifies proves nothing.
// Releases made by the release workflow are keyless and need no key here.
const PublishedKeyPath = "keys/holdfast-cosign.pub"

// CommittedPublicKey returns the file at PublishedKeyPath in root's HEAD
// commit, nil when that commit has none. It reads the commit, not the
// folder: a key lying in the checkout uncommitted (or ignored) is not
// published.
func CommittedPublicKey(ctx context.Context, root string) ([]byte, error) {
	if err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Run(); err != nil {
		return nil, fmt.Errorf("reading %s from the holdfast commit: %s is not a git checkout with a commit: %w", PublishedKeyPath, root, err)
	}
	if err := exec.CommandContext(ctx, "git", "-C", root, "cat-file", "-e", "HEAD:"+PublishedKeyPath).Run(); err != nil {
		return nil, nil
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", root, "show", "HEAD:"+PublishedKeyPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git show HEAD:%s: %w: %s", PublishedKeyPath, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// KeyFingerprint is the SHA-256 of a PEM public key's DER
// SubjectPublicKeyInfo, the figure `openssl pkey -pubin -outform DER |
// sha256sum` prints for the same file: what the README publishes beside
// the key.
func KeyFingerprint(pemKey []byte) (string, error) {
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return "", fmt.Errorf("no PEM block")
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		return "", fmt.Errorf("not a public key: %w", err)
	}
	sum := sha256.Sum256(block.Bytes)
	return "SHA256:" + hex.EncodeToString(sum[:]), nil
}

// checkPublishedKey refuses a key-signed release unless the repository
// holds its public key at PublishedKeyPath. Before the build (preflight)
// the signing key's public half is not read yet, so only the committed
// key's presence and form are checked; after it, that they are one key.
func checkPublishedKey(s *Signing) error {
	if s == nil || s.Signer == nil || s.Signer.Keyless {
		return nil
	}
	if len(s.PublishedKey) == 0 {
		return refuse("a key-signed release needs its public key published: no public key committed at %s. Users verify against the repository, not the folder's cosign.pub (docs/verifying.md): commit `cosign public-key --key KEY` there with its fingerprint in README.md, or sign keylessly (SIGNING=keyless, as the release workflow does)", PublishedKeyPath)
	}
	published, err := KeyFingerprint(s.PublishedKey)
	if err != nil {
		return refuse("%s in the holdfast commit: %v", PublishedKeyPath, err)
	}
	if len(s.PublicKey) == 0 {
		return nil
	}
	signingKey, err := KeyFingerprint(s.PublicKey)
	if err != nil {
		return refuse("the signing key's public half: %v", err)
	}
	if signingKey != published {
		return refuse("the signing key (public half %s) is not the public key committed at %s (%s): sign with the published key, or commit this key's public half there (and its fingerprint in README.md)", signingKey, PublishedKeyPath, published)
	}
	return nil
}
