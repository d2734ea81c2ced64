package toolcache

// vulndbIndexVersion is the golang.org/x/vulndb pseudo-version whose
// cmd/indexdb turns a folder of OSV JSON files into a v1 vulnerability
// database (index/db.json, index/modules.json, index/vulns.json, ID/*.json)
// that govulncheck reads through -db file://. It is the version of the
// database snapshot internal/supplychain/vulnreport indexes
// (vulnreport.VulnDBVersion): the indexer and the data it indexes come from the
// same commit, so the index format is the one that data was written for. Bump
// both together.
const vulndbIndexVersion = "v0.0.0-20261105234957-e22db6528018"

// VulnDBIndex is x/vulndb's cmd/indexdb, which has no version flag. x/vulndb
// has no replace directive, so a wrapper module requiring it builds the
// command with x/vulndb's own dependency versions; its go line (1.26.0) is
// x/vulndb's. Its godebug and toolchain lines apply only when x/vulndb is
// the main module: the toolchain line asks for go1.26.2 or later, and the
// wrapper, at go 1.26.0, builds with any Go 1.26.
var VulnDBIndex = Tool{
	Name:    "vulndb-indexdb",
	Version: vulndbIndexVersion,
	GoMod: `module holdfast.local/vulndb-indexdb-build

go 1.26.0

require golang.org/x/vulndb ` + vulndbIndexVersion + `
`,
	Package: "golang.org/x/vulndb/cmd/indexdb",
	// -s -w: nobody debugs the indexer, and the symbol table is a third of
	// its 28 MB.
	LDFlags: "-s -w",
}
