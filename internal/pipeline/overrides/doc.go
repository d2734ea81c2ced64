// Package overrides reads a series' dependency overrides and applies them
// to a patched tree.
//
// An overrides file (patches/<upstream>/<minor>/overrides) lists, per
// module, the version holdfast raises upstream's requirement to, the
// advisories that version fixes, the upstream requirement that makes the
// entry unnecessary, and why this version (the smallest fixed one in the
// same major; a patch release over a minor where one exists). The file is
// reviewed like a patch: an entry that does not say all four is refused.
//
// Apply raises each requirement with the go command in the patched tree
// (`go get MODULE@VERSION`, checksum database consulted as for the pins)
// and reports what moved: the module itself, and any other requirement
// the go command had to raise with it. An entry whose module upstream
// already requires at or above the version is superseded and changes
// nothing; one the tree cannot take (the module is not required, is
// replaced, or needs a newer go line than upstream's, which would change
// the binaries' GODEBUG defaults) conflicts and stops the apply.
package overrides
