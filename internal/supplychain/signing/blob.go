package signing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// BundleSuffix is appended to a signed file's name for its cosign bundle:
// the signature, and keylessly the certificate and the Rekor entry.
const BundleSuffix = ".cosign.bundle"

// SignBlob signs file with `cosign sign-blob` and writes file+BundleSuffix.
// Verify with `cosign verify-blob --key cosign.pub --bundle FILE.cosign.bundle FILE`.
func (s *Signer) SignBlob(ctx context.Context, file string) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	bundle := file + BundleSuffix
	tmp, err := tempBeside(bundle)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	args := append([]string{"sign-blob"}, s.signFlags()...)
	args = append(args, "--bundle", tmp, file)
	if err := s.run(ctx, args...); err != nil {
		return "", fmt.Errorf("signing %s: %w", filepath.Base(file), err)
	}
	return bundle, os.Rename(tmp, bundle)
}

// AttestBlobs signs an in-toto statement (internal/supplychain/slsa.Statement)
// as a DSSE envelope with `cosign attest-blob --statement`, written to bundle.
// Any file the statement names as a subject then verifies with `cosign
// verify-blob-attestation --key cosign.pub --bundle BUNDLE --type
// slsaprovenance1 FILE`.
func (s *Signer) AttestBlobs(ctx context.Context, statement, bundle string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	tmp, err := tempBeside(bundle)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	args := append([]string{"attest-blob"}, s.signFlags()...)
	args = append(args, "--statement", statement, "--bundle", tmp)
	if err := s.run(ctx, args...); err != nil {
		return fmt.Errorf("attesting %s: %w", filepath.Base(statement), err)
	}
	return os.Rename(tmp, bundle)
}

// tempBeside names a file in dest's folder that cosign can write: a
// failed run leaves no bundle under the final name.
func tempBeside(dest string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".partial-")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	// cosign refuses nothing about an existing file, but an empty one
	// looks like a bundle to a careless reader: remove it first.
	return name, os.Remove(name)
}
