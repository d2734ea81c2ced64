// Package build compiles a patched tree's binaries the way the upstream's
// own release build does, and stamps them with holdfast's provenance.
//
// The build is static and reproducible: CGO_ENABLED=0, -trimpath, and
// version variables set with -ldflags -X as Karmada's hack/util.sh
// (util::version_ldflags) sets them, but from holdfast's inputs: the version
// is the pin's VersionString (v1.18.2-holdfast.1), the commit slot names
// holdfast's commit and the patch series hash, and the build date is
// SOURCE_DATE_EPOCH or holdfast's commit time, never the wall clock. Which
// variables exist is the upstream's business, so the pin file names them
// (the `version` directive, internal/pipeline/pins.VersionVars).
//
// Binaries are built into a hidden folder and renamed into
// <out>/<upstream>-<version>/ last, so a reader never sees a half-written
// set. That folder holds the host build; a Platform (GOOS/GOARCH, for the
// images) is cross-compiled into <out>/<upstream>-<version>-platforms/
// <os>/<arch>/ beside it, so neither kind of build replaces the other.
package build
