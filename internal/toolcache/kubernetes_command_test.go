package toolcache

import (
	"strings"
	"testing"
)

// The other Kubernetes commands must resolve the same module versions as
// kube-apiserver (their compiled packages are then shared in the Go build
// cache) and report the same version.
func TestKubernetesCommandIsBuiltAsKubeAPIServer(t *testing.T) {
	kcm := KubernetesCommand("kube-controller-manager")
	if kcm.Package != "k8s.io/kubernetes/cmd/kube-controller-manager" || kcm.Version != KubeAPIServer.Version || kcm.LDFlags != KubeAPIServer.LDFlags {
		t.Errorf("KubernetesCommand = %+v", kcm)
	}
	body := func(gomod string) string { _, rest, _ := strings.Cut(gomod, "\n"); return rest }
	if body(kcm.GoMod) != body(KubeAPIServer.GoMod) {
		t.Errorf("go.mod differs from kube-apiserver's beyond the module line:\n%s\n---\n%s", kcm.GoMod, KubeAPIServer.GoMod)
	}
	if kcm.Dir("/r") == KubernetesCommand("kubectl").Dir("/r") || kcm.Dir("/r") == KubeAPIServer.Dir("/r") {
		t.Error("two commands share a cache folder")
	}
	if err := kcm.validate(); err != nil {
		t.Error(err)
	}
}
