package toolcache

// cosignVersion is the cosign that signs releases (`make release`) and that
// the signing tests verify them with. v2 rather than v3: v2.6 still writes
// and reads the key-based signatures and bundles that every cosign since
// v2.0 verifies (`cosign verify --key`), which is what operators on older
// admission controllers run; v3 makes the protobuf bundle the default.
const cosignVersion = "v2.6.5"

// Cosign is sigstore's cosign CLI, built from its own module with the
// version variables its Makefile sets, so `cosign version` names the
// release that signed an artifact.
var Cosign = Tool{
	Name:    "cosign",
	Version: cosignVersion,
	// go 1.25.0 is cosign v2.6.5's own go line.
	GoMod: `module holdfast.local/cosign-build

go 1.25.0

require github.com/sigstore/cosign/v2 ` + cosignVersion + `
`,
	Package: "github.com/sigstore/cosign/v2/cmd/cosign",
	LDFlags: "-s -w -buildid=" +
		" -X sigs.k8s.io/release-utils/version.gitVersion=" + cosignVersion +
		" -X sigs.k8s.io/release-utils/version.gitTreeState=clean",
}
