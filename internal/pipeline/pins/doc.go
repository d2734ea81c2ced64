// Package pins reads and edits holdfast's pin file (pins.txt at the
// repository root): which upstream modules the distribution builds, at which
// versions, with which h1: checksum, which patch series, which carried pkg/
// libraries and which binaries.
//
// The file is a line format in the spirit of go.mod rather than YAML so that
// parsing can be strict with exact line numbers (unknown directives,
// unknown options, duplicates and missing defaults are errors), and so that a
// rebase changes exactly one line, which keeps pin bumps easy to review.
// Version and checksum syntax are checked with golang.org/x/mod.
package pins
