package toolcache

// controllerGenVersion is the controller-gen worker-operator v1.6.4's
// Makefile installs (CONTROLLER_GEN, `go-get-tool ...controller-gen@v0.17.3`):
// the worker series regenerates config/rbac/role.yaml with it, so a patch's
// generated lines are byte for byte what upstream's `make manifests` writes
// from the same markers.
const controllerGenVersion = "v0.17.3"

// ControllerGen is controller-tools' controller-gen. Installed, as upstream's
// Makefile does (go install), so its dependencies are controller-tools' own
// go.mod's and `controller-gen --version` reports v0.17.3 from its build
// information (pkg/version falls back to it when no -X is set).
var ControllerGen = Tool{
	Name:    "controller-gen",
	Version: controllerGenVersion,
	Package: "sigs.k8s.io/controller-tools/cmd/controller-gen",
	Install: true,
}
