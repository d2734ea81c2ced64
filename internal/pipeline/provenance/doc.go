// Package provenance writes and reads HOLDFAST-PROVENANCE, the file at the
// root of every tree holdfast produces that says what went into it: the
// upstream module, version and h1: hash, holdfast's revision and version
// string, the patch series, and the series hash. The build step reads it to
// stamp binaries through -ldflags (as Karmada's own hack/build.sh stamps
// versions), so a running binary can be traced back to its exact inputs.
//
// The format is "key: value" lines, readable by a person and by a shell
// (sed -n 's/^holdfast-version: //p'), with keys in a fixed order and no
// timestamps, so that the same inputs give a byte-identical file.
package provenance
