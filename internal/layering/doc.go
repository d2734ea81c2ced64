// Package layering holds no code; its test keeps holdfast's trees layered.
//
// e2e/ holds the end-to-end suites and the commands that drive them; the
// libraries they share with the rest of holdfast (the e2e report contract the
// release gate reads, the tool cache, the control-plane harness the chart
// tests start) live under internal/, so that cmd/, internal/ and pkg/ never
// import e2e/. A suite may change or move without touching what a release is
// built from, and the release gate reads e2e.json through a package that
// builds without any suite.
//
// internal/ is grouped by kind (docs/layout.md): internal/pipeline/ and
// internal/supplychain/ are what a release is built from, internal/harness/
// only tests it, and the few shared leaves directly under internal/ are
// imported by more than one kind. Nothing a release binary can hold (a
// non-test file of the pipeline or the supply chain, any file of cmd/ or
// pkg/) imports the harness, and a shared leaf imports no kind, so a change
// to the harness never reaches a release.
//
// The test parses the import clauses of every Go file under cmd/, internal/
// and pkg/ with go/parser, whatever its build tags (an e2e-tagged test file
// counts), so an import hidden behind a tag the unit run does not set is
// still caught.
package layering
