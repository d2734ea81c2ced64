package toolcache

import (
	"fmt"
	"strings"
)

// kubernetesVersion is the kube-apiserver the suites run against: the
// release matching the client-go (v0.35.3) holdfast's go.mod requires.
const kubernetesVersion = "v1.35.3"

// kubernetesStaging lists the modules k8s.io/kubernetes replaces with its
// staging folders (the replace block of its go.mod). A module outside the
// kubernetes repository cannot use those relative replaces, so the wrapper
// replaces each with its published release instead. Keep in sync with
// k8s.io/kubernetes' go.mod when the version moves: `go mod tidy` fails
// with "unknown revision v0.0.0" on a missing one.
var kubernetesStaging = []string{
	"api", "apiextensions-apiserver", "apimachinery", "apiserver",
	"cli-runtime", "client-go", "cloud-provider", "cluster-bootstrap",
	"code-generator", "component-base", "component-helpers",
	"controller-manager", "cri-api", "cri-client", "csi-translation-lib",
	"dynamic-resource-allocation", "endpointslice", "externaljwt", "kms",
	"kube-aggregator", "kube-controller-manager", "kube-proxy",
	"kube-scheduler", "kubectl", "kubelet", "metrics", "mount-utils",
	"pod-security-admission", "sample-apiserver", "sample-cli-plugin",
	"sample-controller",
}

// KubeAPIServer is kube-apiserver built from k8s.io/kubernetes, with the
// version variables its release build sets, so that /version and
// --version report v1.35.3 rather than "v0.0.0-master": clients under test
// read the server version through discovery (Karmada records it in the
// Cluster status).
//
// The node's binaries (internal/harness/node) come from the same build, with
// the same version variables: a separate tool would compile most of
// kube-apiserver's packages again under its own lock, while here the extra
// cold cost is only what kubelet and kube-proxy add (the container runtime
// client, cadvisor, netlink). Their paths: KubeAPIServer.PathOf(root,
// Kubelet) and so on.
var KubeAPIServer = Tool{
	Name:    "kube-apiserver",
	Version: kubernetesVersion,
	GoMod:   kubernetesWrapperGoMod("holdfast.local/kube-apiserver-build", kubernetesVersion),
	Package: "k8s.io/kubernetes/cmd/kube-apiserver",
	LDFlags: kubernetesVersionLDFlags(kubernetesVersion),
	Also: []string{
		"k8s.io/kubernetes/cmd/" + Kubelet,
		"k8s.io/kubernetes/cmd/" + KubeControllerManager,
		"k8s.io/kubernetes/cmd/" + KubeScheduler,
		"k8s.io/kubernetes/cmd/" + KubeProxy,
		"k8s.io/kubernetes/cmd/" + Kubectl,
	},
}

// The node's binaries built with kube-apiserver (KubeAPIServer.Also), by
// the names PathOf takes.
const (
	Kubelet               = "kubelet"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	KubeProxy             = "kube-proxy"
	// Kubectl is for the stand-in images of the Karmada chart's hook jobs
	// (internal/harness/standin); it shares nearly every package too.
	Kubectl = "kubectl"
)

// kubernetesVersionLDFlags sets what hack/lib/version.sh sets in a
// Kubernetes release build, in both packages it sets them in, except the
// commit and build date, which a module build does not know (and leaving
// out the date keeps the binary reproducible). -X applies at link time
// only, so the Go build cache still serves every compile step.
func kubernetesVersionLDFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/client-go/pkg/version", "k8s.io/component-base/version"} {
		for _, kv := range [][2]string{{"gitVersion", version}, {"gitMajor", major}, {"gitMinor", minor}, {"gitTreeState", "clean"}} {
			flags = append(flags, fmt.Sprintf("-X %s.%s=%s", pkg, kv[0], kv[1]))
		}
	}
	return strings.Join(flags, " ")
}

// kubernetesWrapperGoMod returns a go.mod requiring k8s.io/kubernetes at
// version with every staging module replaced by its release of the same
// minor (kubernetes vX.Y.Z publishes them as v0.Y.Z).
func kubernetesWrapperGoMod(module, version string) string {
	staging := "v0" + strings.TrimPrefix(version, "v1")
	var b strings.Builder
	// go 1.25.0 is k8s.io/kubernetes v1.35's own go line.
	fmt.Fprintf(&b, "module %s\n\ngo 1.25.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n", module, version)
	for _, m := range kubernetesStaging {
		fmt.Fprintf(&b, "\tk8s.io/%s => k8s.io/%s %s\n", m, m, staging)
	}
	b.WriteString(")\n")
	return b.String()
}
