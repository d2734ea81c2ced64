// Package signing signs a release with sigstore's cosign: the image
// indexes and every platform manifest, the SLSA provenance and SPDX SBOM
// attestations of each image, and the release folder's blobs (CHECKSUMS,
// the charts, the provenance statement).
//
// It runs the cosign CLI, built from its own Go module into the tool cache
// (internal/toolcache.Cosign), rather than cosign's Go packages: the CLI is
// what writes the signature manifests, DSSE envelopes and bundles, so what
// holdfast ships is by construction what `cosign verify`,
// `cosign verify-attestation`, `cosign verify-blob` and the admission
// controllers built on them (Kyverno, sigstore's policy-controller) read.
// cosign's Go API below the CLI is internal plumbing with no compatibility
// promise; holdfast writes no signature format of its own.
//
// Two modes. With a key (a cosign key file or a KMS URI), signing works
// offline: nothing is uploaded to a transparency log unless asked, so
// verification takes --insecure-ignore-tlog (cosign's name for "trust the
// key alone"). Keyless (the release workflow) uses the workflow's OIDC
// token, a Fulcio certificate and a Rekor entry; verification then names the
// workflow identity instead of a key. docs/verifying.md has the commands.
//
// cosign signs images in a registry. A release is made before anything is
// pushed, so SignImages starts a registry on 127.0.0.1 for the duration of
// the signing, pushes each OCI layout there, signs and attests by digest, and
// copies the signature and attestation manifests cosign wrote back into the
// layout, tagged as cosign tags them (sha256-<digest>.sig, .att). Pushing
// the layout (internal/pipeline/image.Push) then publishes image, SBOM and
// signatures together; their digests never change on the way.
package signing
