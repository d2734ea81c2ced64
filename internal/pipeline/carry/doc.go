// Package carry puts holdfast's own code into an upstream tree: the pkg/
// libraries, copied with their import paths rewritten so that they build
// as part of the upstream module with the upstream go.mod deciding every
// dependency version, and the overlay (glue files) and carried tests,
// copied as they are.
//
// A library lands in <tree>/third_party/holdfast/<lib> and is imported as
// <upstream module>/third_party/holdfast/<lib>, next to the third-party code
// upstreams already keep there. Imports are rewritten through go/parser
// positions, not text search, so only import paths change; the result is
// gofmt'd because a longer path can reorder or realign an import block.
// Overlay files are written against the carried path directly, and must
// not import holdfast's module. Nothing laid down may replace an upstream
// file: changing an upstream file is what a patch is for.
package carry
