package toolcache

// actionlintVersion is the workflow linter `make lint-workflows` (and so
// `make test`) runs on .github/workflows.
const actionlintVersion = "v1.7.12"

// Actionlint is rhysd/actionlint's command. Built in a wrapper module its
// build info says "(devel)", so the version variable its releases set is
// set here too: `actionlint -version` then says which rules judged the
// workflows.
var Actionlint = Tool{
	Name:    "actionlint",
	Version: actionlintVersion,
	// go 1.25.0 is actionlint v1.7.12's own go line.
	GoMod: `module holdfast.local/actionlint-build

go 1.25.0

require github.com/rhysd/actionlint ` + actionlintVersion + `
`,
	Package: "github.com/rhysd/actionlint/cmd/actionlint",
	LDFlags: "-s -w -X github.com/rhysd/actionlint.version=" + actionlintVersion,
}

// Tools are the tools of this package a command can name (`holdfast tools
// path NAME`) and that the CI cache key covers.
var Tools = []Tool{Etcd, KubeAPIServer, Helm, Actionlint, Govulncheck, VulnDBIndex, Cosign, ControllerGen, Gremlins, Promtool}

// Lookup returns the tool called name.
func Lookup(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
