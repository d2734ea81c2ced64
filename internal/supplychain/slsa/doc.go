// Package slsa writes the SLSA v1 build provenance of a holdfast release as
// in-toto v1 statements: which builder ran, from which holdfast commit, onto
// which pinned upstream module (named by its go.sum h1: hash) with which
// patch series (named by its series hash), and with what parameters.
//
// The statements are built with in-toto's own Go bindings
// (github.com/in-toto/attestation) and checked with their Validate methods,
// so the JSON is the schema's, not a look-alike. cosign signs them
// (internal/supplychain/signing): `cosign attest` for images, `cosign
// attest-blob` for the release folder's files.
//
// The build type and what each field holds are documented in
// docs/release.md#provenance; a consumer (cosign verify-attestation with a
// policy, slsa-verifier, Kyverno) can check the upstream pin and the series
// hash against pins.txt.
package slsa
