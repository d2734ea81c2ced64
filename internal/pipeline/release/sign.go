package release

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/supplychain/signing"
	"github.com/holdfast-dist/holdfast/internal/supplychain/slsa"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
)

// Files the signing step adds to a release.
const (
	// ProvenanceFile is the in-toto statement of the release's SLSA
	// provenance, naming every file and image as a subject.
	ProvenanceFile = "provenance.intoto.json"
	// ProvenanceBundle is its cosign DSSE envelope.
	ProvenanceBundle = "provenance.intoto.json" + signing.BundleSuffix
	// PublicKeyFile is the signing key's public half, for convenience:
	// verify against the key published with the project (docs/verifying.md),
	// not against a file that came with what it verifies.
	PublicKeyFile = "cosign.pub"
	// attestationsDir holds the predicates attached to the images.
	attestationsDir = "attestations"
)

// Signing says how a release is signed. A nil *Signing in Options is a
// release that is not signed, which Assemble refuses unless Unsigned is set.
type Signing struct {
	Signer *signing.Signer
	// PublicKey is the public key to ship as cosign.pub (key mode).
	PublicKey []byte
	// PublishedKey is the public key committed at PublishedKeyPath in the
	// holdfast commit being released (CommittedPublicKey), nil if none.
	// Users verify a key-signed release against it, so Assemble refuses a
	// key-signed release unless it is PublicKey.
	PublishedKey []byte
	// Build is the provenance's build description; Assemble fills in the
	// upstreams from Shipped.
	Build slsa.Build
}

// sign runs after the artifacts are in the staging folder and before
// CHECKSUMS is written: images (signatures and attestations into their
// layouts), charts (a bundle each), the release provenance (statement and
// its DSSE bundle), the public key. It returns the notes' verification
// section.
func sign(ctx context.Context, o Options, stage string, images []imagebuild.Digests) (string, error) {
	s := o.Signing
	b := s.Build
	b.Upstreams = nil
	for _, sh := range o.Shipped {
		b.Upstreams = append(b.Upstreams, slsa.Upstream{
			Name: sh.Upstream.Name, Module: sh.Upstream.Module, Version: sh.Pin.Version, Sum: sh.Pin.Sum,
			Revision: sh.Pin.Revision, HoldfastVersion: sh.Pin.VersionString(), Series: sh.Pin.Series, SeriesHash: sh.SeriesHash,
		})
	}

	// The release's one OpenVEX document names every binary, so each image
	// carries all of it: a scanner reading the image's attestations finds
	// the verdicts on its own binary among them.
	vex := filepath.Join(stage, vulnreport.FolderName, vulnreport.VEXFile)
	if _, err := os.Stat(vex); err != nil {
		return "", fmt.Errorf("attaching the OpenVEX document to the images: %w", err)
	}

	// Every image: SLSA provenance (of its own upstream), its SPDX and
	// CycloneDX SBOMs and the release's OpenVEX document.
	var toSign []signing.Image
	for _, sh := range o.Shipped {
		ib := b
		ib.Upstreams = nil
		for _, u := range b.Upstreams {
			if u.Name == sh.Upstream.Name {
				ib.Upstreams = append(ib.Upstreams, u)
			}
		}
		pred, err := slsa.PredicateJSON(ib)
		if err != nil {
			return "", err
		}
		predPath := filepath.Join(stage, attestationsDir, sh.Upstream.Name+"-"+sh.Pin.Version+".slsa-provenance.json")
		if err := writeNew(predPath, pred); err != nil {
			return "", err
		}
		for _, d := range images {
			if !strings.HasSuffix(d.Ref, ":"+sh.Pin.VersionString()) {
				continue
			}
			toSign = append(toSign, signing.Image{
				Layout:     imagebuild.LayoutDir(filepath.Join(stage, "images"), sh.Upstream, sh.Pin.Version, d.Binary),
				Repository: d.Binary, Tag: sh.Pin.VersionString(),
				Attestations: []signing.Attestation{
					{Type: "slsaprovenance1", Predicate: predPath},
					{Type: "spdxjson", Predicate: imagebuild.SBOMPath(filepath.Join(stage, "images"), sh.Upstream, sh.Pin.Version, d.Binary)},
					{Type: "cyclonedx", Predicate: imagebuild.CycloneDXPath(filepath.Join(stage, "images"), sh.Upstream, sh.Pin.Version, d.Binary)},
					{Type: "openvex", Predicate: vex},
				},
			})
		}
	}
	logf(o.Log, "signing %d images (index and platform manifests; SLSA provenance, SPDX and CycloneDX SBOM, OpenVEX attestations)", len(toSign))
	if _, err := s.Signer.SignImages(ctx, toSign); err != nil {
		return "", err
	}

	charts, err := filepath.Glob(filepath.Join(stage, "charts", "*.tgz"))
	if err != nil {
		return "", err
	}
	for _, c := range charts {
		if _, err := s.Signer.SignBlob(ctx, c); err != nil {
			return "", err
		}
	}

	// The release provenance names every file (but the OCI layouts' blobs,
	// which the images' digests name) and every image manifest.
	subjects, err := fileSubjects(stage)
	if err != nil {
		return "", err
	}
	for _, d := range images {
		subjects = append(subjects, slsa.Subject{Name: d.Ref, SHA256: d.Index.Hex})
		for _, p := range d.Platforms {
			subjects = append(subjects, slsa.Subject{Name: d.Ref + " " + p.Platform, SHA256: p.Digest.Hex})
		}
	}
	st, err := slsa.Statement(b, subjects)
	if err != nil {
		return "", err
	}
	if err := writeNew(filepath.Join(stage, ProvenanceFile), st); err != nil {
		return "", err
	}
	logf(o.Log, "attesting the release provenance (%d subjects)", len(subjects))
	if err := s.Signer.AttestBlobs(ctx, filepath.Join(stage, ProvenanceFile), filepath.Join(stage, ProvenanceBundle)); err != nil {
		return "", err
	}
	if len(s.PublicKey) > 0 {
		if err := writeNew(filepath.Join(stage, PublicKeyFile), s.PublicKey); err != nil {
			return "", err
		}
	}
	return verifyingSection(s, images, o.Shipped), nil
}

// fileSubjects are the staged files, layouts' contents excepted.
func fileSubjects(stage string) ([]slsa.Subject, error) {
	var out []slsa.Subject
	err := filepath.WalkDir(stage, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// An OCI layout: its index and blobs are named by the image digests.
			if _, err := os.Stat(filepath.Join(path, "oci-layout")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(stage, path)
		if err != nil {
			return err
		}
		sum, err := sha256File(path)
		if err != nil {
			return err
		}
		out = append(out, slsa.Subject{Name: filepath.ToSlash(rel), SHA256: sum})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// verifyingSection is the notes' "Verifying" section: the commands, with
// this release's names filled in.
func verifyingSection(s *Signing, images []imagebuild.Digests, shipped []Shipped) string {
	var b strings.Builder
	b.WriteString("## Verifying\n\n")
	fmt.Fprintf(&b, "Signed with cosign, %s. docs/verifying.md explains each command and what it proves.\n\n", s.Signer.Mode())
	var keyFlags, blobFlags string
	if s.Signer.Keyless {
		id := "--certificate-identity-regexp '^https://github.com/holdfast-dist/holdfast/.github/workflows/release.yml@refs/tags/v' --certificate-oidc-issuer https://token.actions.githubusercontent.com"
		keyFlags, blobFlags = id, id
	} else {
		keyFlags = "--key cosign.pub"
		if !s.Signer.TlogUpload {
			keyFlags += " --insecure-ignore-tlog"
		}
		blobFlags = keyFlags
	}
	b.WriteString("```sh\n")
	fmt.Fprintf(&b, "cosign verify-blob %s --bundle CHECKSUMS%s CHECKSUMS && sha256sum -c CHECKSUMS\n", blobFlags, signing.BundleSuffix)
	fmt.Fprintf(&b, "cosign verify-blob-attestation %s --type slsaprovenance1 --bundle %s FILE   # any file of this folder\n", blobFlags, ProvenanceBundle)
	if len(images) > 0 {
		d := images[0]
		repo, _, _ := strings.Cut(d.Ref, ":")
		fmt.Fprintf(&b, "cosign verify %s %s@%s\n", keyFlags, repo, d.Index)
		fmt.Fprintf(&b, "cosign verify-attestation %s --type slsaprovenance1 %s@%s\n", keyFlags, repo, d.Index)
		fmt.Fprintf(&b, "cosign verify-attestation %s --type spdxjson %s@%s\n", keyFlags, repo, d.Index)
		fmt.Fprintf(&b, "cosign verify-attestation %s --type cyclonedx %s@%s\n", keyFlags, repo, d.Index)
		fmt.Fprintf(&b, "cosign verify-attestation %s --type openvex %s@%s\n", keyFlags, repo, d.Index)
	}
	b.WriteString("```\n")
	return b.String()
}
