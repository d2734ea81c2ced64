// Package docs keeps the documentation true to the repository it
// describes.
//
// Some sections are generated from the files they describe, so that a
// review board reads what ships rather than a copy: adopting.md's build
// section (the Go toolchain, each pin's upstream go line, every
// dependency override with its reason and every waiver, from pins.txt
// and patches/<upstream>/<minor>/overrides) and compatibility.md's map
// from the pins to the artifacts a release ships. A generated section
// sits between
//
//	<!-- BEGIN GENERATED NAME: ... -->
//	<!-- END GENERATED NAME -->
//
// and `make docs` (go run ./docs/gen) rewrites it. The package's tests
// fail when a committed section differs from what the files give, naming
// the command, and when a page, README.md, a chart's values comments or
// NOTES name a holdfast revision, a make verb, a holdfast verb or a flag
// the repository does not have (docs_test.go).
//
// Upstream go.mod files (go lines, client-go versions) are read with
// `go list -m -json MODULE@VERSION`, which fetches only the .mod file
// through the module proxy, checked against the checksum database.
package docs
