//go:build e2e

package charts

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// TestInstallIntoKubeAPIServer installs both charts into a real
// kube-apiserver (etcd + kube-apiserver, no nodes, no controllers) and reads
// back what the API server stored: the Deployments must carry holdfast's
// images, flags, env and volumes after the server's defaulting and
// validation, and an upgrade to the HA values must reach the worker's
// Deployment. Pods are never scheduled, and need not be for this.
func TestInstallIntoKubeAPIServer(t *testing.T) {
	f := setup(t)
	cluster := controlplane.StartForTest(t, controlplane.Options{Name: "charts"})
	kube := cluster.Kubernetes()
	// helm checks a chart's kubeVersion (Karmada's: ">= 1.16.0-0") against
	// the server's /version; a kube-apiserver built without its version
	// stamped says v0.0.0 and every such install fails.
	if v, err := kube.Discovery().ServerVersion(); err != nil || strings.HasPrefix(v.GitVersion, "v0.0.0") {
		t.Fatalf("kube-apiserver /version: %v %v: internal/toolcache must build it with its version (-ldflags -X k8s.io/component-base/version...)", v, err)
	}
	helm := func(t *testing.T, args ...string) string {
		t.Helper()
		return f.helmOK(t, append(args, "--kubeconfig", cluster.AdminKubeconfig())...)
	}
	deployment := func(t *testing.T, namespace, name string) *appsv1.Deployment {
		t.Helper()
		d, err := kube.AppsV1().Deployments(namespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Deployment %s/%s after helm install: %v", namespace, name, err)
		}
		return d
	}

	t.Run("karmada", func(t *testing.T) {
		// --no-hooks: the chart's hook Jobs (certificates, static
		// resources) need running pods, and helm would wait for them.
		helm(t, "install", "karmada", f.karmada.Path, "--namespace", karmadaNamespace, "--create-namespace",
			"--no-hooks", "--values", f.path(karmadaHAValues))
		hv := f.karmada.AppVersion
		for name, image := range map[string]string{
			"karmada-controller-manager": holdfastImage("karmada-controller-manager", hv),
			"karmada-search":             holdfastImage("karmada-search", hv),
			"karmada-metrics-adapter":    holdfastImage("karmada-metrics-adapter", hv),
			"karmada-scheduler":          "docker.io/karmada/karmada-scheduler:" + f.karmada.Pin.Version,
		} {
			d := deployment(t, karmadaNamespace, name)
			if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
				t.Errorf("Deployment %s runs %s, want %s", name, got, image)
			}
		}
		cm := deployment(t, karmadaNamespace, "karmada-controller-manager")
		c := cm.Spec.Template.Spec.Containers[0]
		for _, flag := range []string{"--own-credential-guard-action=unhealthy", "--own-credential-guard-threshold=3", "--own-credential-guard-window=2m"} {
			if !slices.Contains(c.Command, flag) {
				t.Errorf("controller-manager command lacks %s: %q", flag, c.Command)
			}
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("controller-manager readiness probe %+v, want /readyz for the unhealthy action", c.ReadinessProbe)
		}
		if *cm.Spec.Replicas != 2 {
			t.Errorf("controller-manager replicas %d, want 2", *cm.Spec.Replicas)
		}
	})

	t.Run("worker-operator", func(t *testing.T) {
		notes := helm(t, "install", "worker", f.operator.Path, "--namespace", workerNamespace, "--create-namespace",
			"--values", f.path(workerPrimary))
		if !strings.Contains(notes, "Hub failover following is OFF") {
			t.Errorf("install NOTES do not say failover following is off:\n%s", notes)
		}
		d := deployment(t, workerNamespace, "kubeslice-operator")
		c := d.Spec.Template.Spec.Containers[0]
		if want := holdfastImage("worker-operator", f.operator.AppVersion); c.Image != want {
			t.Errorf("worker runs %s, want %s", c.Image, want)
		}
		if env := workerEnv(c); slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "HUB_SECONDARY_") }) {
			t.Errorf("one-hub install sets %q", env)
		}
		if len(d.Spec.Template.Spec.Volumes) != 1 {
			t.Errorf("one-hub install has volumes %+v, want hub-token only", d.Spec.Template.Spec.Volumes)
		}

		// The CRDs come from upstream's config/crd/bases through crds/.
		crds := cluster.Dynamic().Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		for _, name := range []string{"slices.networking.kubeslice.io", "slicegateways.networking.kubeslice.io",
			"serviceexports.networking.kubeslice.io", "serviceimports.networking.kubeslice.io"} {
			if _, err := crds.Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				t.Errorf("CRD %s: %v", name, err)
			}
		}
		if _, err := kube.RbacV1().ClusterRoles().Get(t.Context(), "kubeslice-manager-role", metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRole: %v", err)
		}

		// Turning failover following on later is a values change.
		notes = helm(t, "upgrade", "worker", f.operator.Path, "--namespace", workerNamespace, "--values", f.path(workerHA))
		for _, want := range []string{
			"Hub failover following is CONFIGURED",
			"VERIFY IT NOW",
			"get secret hub-secondary-token",
			"HUB_B=https://hub-b.example.com:6443",
			"config set users.worker.tokenFile",
			`kubeslice_worker_hub_credential_accepted{hub="secondary"} 1`,
		} {
			if !strings.Contains(notes, want) {
				t.Errorf("upgrade NOTES lack %q:\n%s", want, notes)
			}
		}
		d = deployment(t, workerNamespace, "kubeslice-operator")
		c = d.Spec.Template.Spec.Containers[0]
		if env := workerEnv(c); !slices.Contains(env, "HUB_SECONDARY_HOST_ENDPOINT=https://hub-b.example.com:6443") ||
			!slices.Contains(env, "HUB_SWITCH_CONFIRMATIONS=2") {
			t.Errorf("upgraded worker env %q lacks the secondary hub", env)
		}
		var secondary *corev1.Volume
		for i, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == "hub-secondary-token" {
				secondary = &d.Spec.Template.Spec.Volumes[i]
			}
		}
		if secondary == nil || secondary.Secret == nil || secondary.Secret.SecretName != "hub-secondary-token" ||
			secondary.Secret.Optional == nil || !*secondary.Secret.Optional {
			t.Errorf("upgraded worker's secondary volume %+v, want optional Secret hub-secondary-token", secondary)
		}
	})
}
