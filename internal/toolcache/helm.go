package toolcache

// helmVersion is the Helm the chart tests and `holdfast charts` run. Any
// Helm 3.8 or later pushes to and pulls from OCI registries without the
// experimental flag; this one is recent enough to know Kubernetes 1.34.
const helmVersion = "v3.19.0"

// helmKubeMinor is the Kubernetes minor of the client-go helm v3.19.0's
// go.mod requires (v0.34.0). Helm's Makefile derives the default
// .Capabilities.KubeVersion and the lint rules' deprecation baseline from it
// through -X; a plain `go build` would leave Helm's fallback (1.20), and
// `helm template` and `helm lint` would then judge charts against a
// Kubernetes four years older than the one the release shipped for.
const helmKubeMinor = "34"

// Helm is the helm CLI, built from helm.sh/helm/v3's cmd/helm with the
// variables its own Makefile sets, so `helm version` reports v3.19.0 rather
// than the module's placeholder "v3.19", and OCI pushes carry the same
// user agent a released helm would.
var Helm = Tool{
	Name:    "helm",
	Version: helmVersion,
	// go 1.24.0 is helm v3.19.0's own go line.
	GoMod: `module holdfast.local/helm-build

go 1.24.0

require helm.sh/helm/v3 ` + helmVersion + `
`,
	Package: "helm.sh/helm/v3/cmd/helm",
	// -s -w as in Helm's Makefile: the symbol table serves no one here and
	// costs a third of the binary.
	LDFlags: "-s -w" +
		" -X helm.sh/helm/v3/internal/version.version=" + helmVersion +
		" -X helm.sh/helm/v3/internal/version.gitTreeState=clean" +
		" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1" +
		" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=" + helmKubeMinor +
		" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1" +
		" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=" + helmKubeMinor,
}
