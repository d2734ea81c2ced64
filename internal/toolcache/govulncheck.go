package toolcache

// govulncheckVersion is the vulnerability scanner `holdfast vulns` and the
// release's vulnerability report run on every patched binary.
const govulncheckVersion = "v1.9.0"

// Govulncheck is golang.org/x/vuln's command. It has no version variable
// for -ldflags -X: it reports the main module's version from its build
// information (internal/scan.scannerVersion), which a wrapper module would
// make "(devel)" and its JSON output "v0.0.0". So it is installed as its own
// main module, and `govulncheck -version` and the scanner_version of every
// report say v1.9.0. It needs no network when given -db file://...: its
// telemetry only counts locally (telemetry.Start without Upload).
var Govulncheck = Tool{
	Name:    "govulncheck",
	Version: govulncheckVersion,
	Package: "golang.org/x/vuln/cmd/govulncheck",
	Install: true,
}
