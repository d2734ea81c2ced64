package toolcache

import "path"

// KubernetesCommand is another command of k8s.io/kubernetes (e.g.
// "kube-controller-manager", "kubectl") built exactly as KubeAPIServer is:
// the same wrapper go.mod (so `go mod tidy` resolves the same module
// versions), -trimpath and the same version variables. Built after
// kube-apiserver, every package they share is a Go build cache hit and only
// the command's own packages compile and link.
func KubernetesCommand(name string) Tool {
	return Tool{
		Name:    name,
		Version: kubernetesVersion,
		GoMod:   kubernetesWrapperGoMod("holdfast.local/"+name+"-build", kubernetesVersion),
		Package: path.Join("k8s.io/kubernetes/cmd", name),
		LDFlags: kubernetesVersionLDFlags(kubernetesVersion),
	}
}
