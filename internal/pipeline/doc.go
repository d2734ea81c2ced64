// Package pipeline turns a pin into trees: pristine upstream source, verified
// against the pin (internal/pipeline/pristine), copied into a staging folder
// (internal/pipeline/stage), holdfast's libraries, overlay and tests laid onto
// it (internal/pipeline/carry), the patch series applied strictly
// (internal/pipeline/patchset), and its provenance written
// (internal/pipeline/provenance).
//
// It builds up to three trees per pin: the patched tree that is built and
// shipped; a pristine twin (upstream's code plus holdfast's regression
// tests, on the patched tree's dependency versions) on which those tests
// are expected to fail, so that RED on pristine and GREEN on patched can be
// shown side by side; and the released tree (upstream's release exactly as
// published) for what upstream's own dependency versions decide.
//
// A tree is rebuilt only when one of its inputs changes: the pin (module,
// version, h1:, revision), the patch files, the overlay, the carried
// libraries, the tests, or the holdfast tool itself.
package pipeline
