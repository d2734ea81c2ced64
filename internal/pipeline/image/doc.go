// Package image assembles holdfast's container images from patched
// binaries, in Go, with github.com/google/go-containerregistry (ggcr): no
// Docker engine and no base image to pull.
//
// An image is an OCI index over one manifest per platform. Each manifest
// has a root filesystem layer holdfast builds itself (CA certificates from
// golang.org/x/crypto/x509roots/fallback, time zones from the Go toolchain,
// /etc/passwd and /etc/group with root and the non-root user 65532), a
// layer of files the upstream image carries from its source tree
// (worker-operator's manifests and scripts), and the binary's layer, laid
// out as the upstream's own image lays it out and run as its user (Spec),
// so the upstream's charts and manifests run it unchanged.
//
// Images are reproducible: tar entries are sorted, every time is the
// build's fixed date (SOURCE_DATE_EPOCH or holdfast's commit time, see
// internal/pipeline/build), owners are numeric and no build path is recorded,
// so the same binaries and provenance give the same digest.
//
// Provenance travels as OCI annotations on the index and every manifest
// and as labels in every config (Provenance.Annotations), and as an SBOM
// of the binary's Go modules read from its embedded build information
// (debug/buildinfo), each with the licence its licence files declare
// (internal/supplychain/modlicense), in two formats: SPDX 2.3 and CycloneDX 1.6
// JSON. Both are written beside the image; the SPDX one is also attached to it
// as an OCI artifact whose subject is the index, so `oras discover` or a
// registry's referrers API finds it.
//
// Outputs are an OCI image layout (index plus SBOM), one `docker load`-able
// tarball per platform, and a push of the layout to any registry (Push).
package image
