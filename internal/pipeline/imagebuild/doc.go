// Package imagebuild turns a pin into container images: it applies the
// series (internal/pipeline, idempotently), cross-compiles the binaries for
// each platform (internal/pipeline/build), assembles one image per binary
// (internal/pipeline/image) and writes, per image, an OCI layout, a `docker
// load`-able tarball per platform and the SBOM; and it pushes those
// layouts to a registry.
//
// Outputs, under Out (default _output/images):
//
//	<upstream>-<version>/<binary>/                   OCI layout: index + SBOM artifact
//	<upstream>-<version>/<binary>-<os>-<arch>.tar    docker load
//	<upstream>-<version>/<binary>.spdx.json          SPDX 2.3 SBOM
//	<upstream>-<version>/<binary>.cdx.json           CycloneDX 1.6 SBOM (same content)
//
// and the cross-compiled binaries in
// _output/bin/<upstream>-<version>-platforms/<os>/<arch>/
// (internal/pipeline/build).
package imagebuild
