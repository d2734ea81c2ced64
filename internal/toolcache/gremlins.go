package toolcache

// gremlinsVersion is the mutation tester `make mutate` runs over pkg/ and
// the release gate's packages (docs/testing.md). v0.6.0 is the newest
// release the Go module proxy serves.
const gremlinsVersion = "v0.6.0"

// Gremlins is go-gremlins/gremlins' command. Built in a wrapper module its
// build info says "(devel)", so the version variable its releases set is set
// here too: `gremlins --version` then names the release whose mutators
// produced a recorded efficacy.
var Gremlins = Tool{
	Name:    "gremlins",
	Version: gremlinsVersion,
	// go 1.25 is gremlins v0.6.0's own go line.
	GoMod: `module holdfast.local/gremlins-build

go 1.25

require github.com/go-gremlins/gremlins ` + gremlinsVersion + `
`,
	Package: "github.com/go-gremlins/gremlins/cmd/gremlins",
	LDFlags: "-s -w -X main.version=" + gremlinsVersion,
}
