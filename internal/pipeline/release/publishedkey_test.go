package release

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/supplychain/signing"
)

func publicKeyPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// keySigning is a key-mode signing configuration that passes the signer's
// own checks; Assemble refuses before cosign would run.
func keySigning(t *testing.T, public, published []byte) *Signing {
	t.Helper()
	key := filepath.Join(t.TempDir(), "cosign.key")
	writeFile(t, key, "not read: refused before signing")
	return &Signing{
		Signer:       &signing.Signer{Cosign: "cosign", Key: key, Env: []string{"COSIGN_PASSWORD="}},
		PublicKey:    public,
		PublishedKey: published,
	}
}

// TestAssembleRefusesAKeySignedReleaseWhoseKeyIsNotCommitted: users verify a
// key-signed release against the public key in this repository
// (docs/verifying.md), so a release signed with a key the repository does
// not hold at PublishedKeyPath could not be verified by anyone.
func TestAssembleRefusesAKeySignedReleaseWhoseKeyIsNotCommitted(t *testing.T) {
	pub := publicKeyPEM(t)
	for _, tc := range []struct {
		name      string
		preflight bool
		published []byte
		want      string
	}{
		{"no committed key, preflight", true, nil, "no public key committed at " + PublishedKeyPath},
		{"no committed key", false, nil, "no public key committed at " + PublishedKeyPath},
		{"another key committed", false, publicKeyPEM(t), "is not the public key committed at " + PublishedKeyPath},
		{"committed key is not a public key", false, []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), PublishedKeyPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.opts.Unsigned, f.opts.Preflight = false, tc.preflight
			f.opts.Signing = keySigning(t, pub, tc.published)
			_, err := Assemble(context.Background(), f.opts)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal containing %q", err, tc.want)
			}
			if _, err := os.Stat(f.opts.Out); !os.IsNotExist(err) {
				t.Errorf("a refused release wrote %s: %v", f.opts.Out, err)
			}
		})
	}
	t.Run("keyless needs no committed key", func(t *testing.T) {
		f := newFixture(t)
		f.opts.Unsigned, f.opts.Preflight = false, true
		f.opts.Signing = &Signing{Signer: &signing.Signer{Cosign: "cosign", Keyless: true}}
		if _, err := Assemble(context.Background(), f.opts); err != nil {
			t.Fatalf("keyless preflight: %v", err)
		}
	})
	t.Run("the committed key, re-encoded, is the signing key", func(t *testing.T) {
		f := newFixture(t)
		f.opts.Unsigned, f.opts.Preflight = false, true
		// The same key with other line endings and a trailing blank line.
		f.opts.Signing = keySigning(t, pub, []byte(strings.ReplaceAll(string(pub), "\n", "\r\n")+"\r\n"))
		if _, err := Assemble(context.Background(), f.opts); err != nil {
			t.Fatalf("preflight with the committed key: %v", err)
		}
	})
}

func TestCommittedPublicKeyReadsTheCommitNotTheFolder(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFile(t, filepath.Join(dir, "README.md"), "x")
	git("add", "README.md")
	git("commit", "-q", "-m", "first")

	if got, err := CommittedPublicKey(context.Background(), dir); err != nil || got != nil {
		t.Errorf("no key: got %q, %v; want nothing, no error", got, err)
	}
	pub := publicKeyPEM(t)
	writeFile(t, filepath.Join(dir, PublishedKeyPath), string(pub))
	if got, err := CommittedPublicKey(context.Background(), dir); err != nil || got != nil {
		t.Errorf("a key in the folder, not committed: got %q, %v; want nothing", got, err)
	}
	git("add", PublishedKeyPath)
	git("commit", "-q", "-m", "key")
	if got, err := CommittedPublicKey(context.Background(), dir); err != nil || string(got) != string(pub) {
		t.Errorf("committed key: got %q, %v; want %q", got, err, pub)
	}
	if _, err := CommittedPublicKey(context.Background(), t.TempDir()); err == nil {
		t.Error("not a git checkout: no error")
	}
}
