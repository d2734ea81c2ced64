// Package vulnreport scans holdfast's binaries for known vulnerabilities
// with govulncheck, offline, and writes the release's vulnerability report.
//
// The database is a snapshot: golang.org/x/vulndb at one pinned commit
// (VulnDBVersion), downloaded through the Go module proxy like every other
// input, checked against the checksum database and the pinned h1: hash
// (internal/pipeline/pristine), and indexed once by x/vulndb's own cmd/indexdb
// into a v1 database under .cache/vulndb/<version>/ that govulncheck reads with
// -db file://. Nothing reaches vuln.go.dev: a report says exactly which
// snapshot it was made against, and the same binaries and snapshot give the
// same report.
//
// Each binary is scanned with `govulncheck -mode=binary -format json`
// (golang.org/x/vuln, built by internal/toolcache). Binary mode reads the
// binary's build information (modules and versions) and its symbol table,
// and classifies each vulnerability of a module at an affected version:
//
//   - reachable: a vulnerable function is in the binary. The linker keeps
//     only what the program can reach (by its dead-code analysis, which is
//     conservative: an exported method of a type in an interface is kept),
//     so this is "linked in and reachable by the linker's reckoning", not a
//     proven call path, which needs source analysis.
//   - imported: a vulnerable package is linked in, none of its vulnerable
//     functions.
//   - required: the module is in the binary at an affected version, none of
//     the vulnerable packages.
//   - unknown: the binary has no symbol table (linked with -s), so
//     govulncheck cannot tell; or the advisory is of the binary's own main
//     module, matched by version (below).
//
// Two gaps of binary mode are closed here rather than left silent. A binary
// built in a checked-out tree says "(devel)" for its main module, and
// govulncheck then skips that module's own advisories; given the version
// the binary was built from (Binary.MainVersion, the pinned upstream tag),
// Scan looks them up with govulncheck's query mode. And a stripped binary
// makes govulncheck report every known vulnerable symbol as present, so
// Scan checks for a symbol table itself and reports such findings as
// unknown instead of reachable.
//
// The report is the folder vulnerabilities/: per binary govulncheck's JSON
// stream (<binary>.json, which `govulncheck -mode=convert` renders as text
// again, and <binary>.main-module.json for the query), and SUMMARY.md;
// Report.Markdown is the section the release notes carry. The streams are
// written in a fixed order, with the database named rather than its local
// folder, and with govulncheck's crediting of nested modules corrected
// (stream.normalise), so that the same binaries and snapshot give the same
// bytes.
package vulnreport
