//go:build e2e

package charts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
)

const workerNamespace = "kubeslice-system"

// Values files, relative to the repository root.
var (
	karmadaHAValues  = "internal/pipeline/charts/testdata/karmada-ha-values.yaml"
	workerPrimary    = WorkerOperatorDir + "/ci/primary-values.yaml"
	workerHA         = WorkerOperatorDir + "/ci/ha-values.yaml"
	karmadaNamespace = "karmada-system"
)

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func TestLintIsClean(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		name      string
		pkg       Package
		namespace string
		values    string
	}{
		{"karmada", f.karmada, karmadaNamespace, ""},
		{"karmada HA", f.karmada, karmadaNamespace, karmadaHAValues},
		{"worker-operator one hub", f.operator, workerNamespace, workerPrimary},
		{"worker-operator HA", f.operator, workerNamespace, workerHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"lint", "--strict", tc.pkg.Path, "--namespace", tc.namespace}
			if tc.values != "" {
				args = append(args, "--values", f.path(tc.values))
			}
			out := f.helmOK(t, args...)
			for _, bad := range []string{"[WARNING]", "[ERROR]"} {
				if strings.Contains(out, bad) {
					t.Errorf("helm %s:\n%s", strings.Join(args, " "), out)
				}
			}
		})
	}
}

func holdfastImage(binary, version string) string {
	return "ghcr.io/holdfast-dist/" + binary + ":" + version
}

func TestKarmadaRendersHoldfastImagesAndGuardFlags(t *testing.T) {
	f := setup(t)
	hv := f.karmada.AppVersion  // v1.18.2-holdfast.3
	uv := f.karmada.Pin.Version // v1.18.2
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name       string
		args       []string
		images     map[string]string // Deployment -> first container's image
		absent     []string          // Deployments that must not render
		guard      []string          // the guard flags on the controller-manager: only the values set
		readiness  bool              // a /readyz readiness probe (action unhealthy)
		replicas   int32
		pullSecret []string
	}{
		{
			name: "defaults",
			images: map[string]string{
				"rel-controller-manager":      holdfastImage("karmada-controller-manager", hv),
				"rel-scheduler":               "docker.io/karmada/karmada-scheduler:" + uv,
				"rel-webhook":                 "docker.io/karmada/karmada-webhook:" + uv,
				"rel-aggregated-apiserver":    "docker.io/karmada/karmada-aggregated-apiserver:" + uv,
				"rel-apiserver":               "registry.k8s.io/kube-apiserver:v1.35.2",
				"rel-kube-controller-manager": "registry.k8s.io/kube-controller-manager:v1.35.2",
			},
			absent: []string{"rel-search", "rel-metrics-adapter"},
			// No value set: no flag, the binary's defaults (exit, 5, 5m).
			guard:    nil,
			replicas: 1,
		},
		{
			name: "HA values",
			args: []string{"--values", karmadaHAValues},
			images: map[string]string{
				"rel-controller-manager": holdfastImage("karmada-controller-manager", hv),
				"rel-search":             holdfastImage("karmada-search", hv),
				"rel-metrics-adapter":    holdfastImage("karmada-metrics-adapter", hv),
			},
			guard:     []string{"--own-credential-guard-action=unhealthy", "--own-credential-guard-threshold=3", "--own-credential-guard-window=2m", "--own-credential-guard-min-duration=90s"},
			readiness: true,
			replicas:  2,
		},
		{
			// The stand-in `common` chart keeps bitnami's semantics: the
			// global registry moves every image, pull secrets merge in order.
			name: "mirror registry and pull secrets",
			args: []string{"--set", "global.imageRegistry=mirror.example.com,global.imagePullSecrets={pull-a},controllerManager.image.pullSecrets={pull-b,pull-a}"},
			images: map[string]string{
				"rel-controller-manager": "mirror.example.com/holdfast-dist/karmada-controller-manager:" + hv,
				"rel-scheduler":          "mirror.example.com/karmada/karmada-scheduler:" + uv,
			},
			replicas:   1,
			pullSecret: []string{"pull-a", "pull-b"},
		},
		{
			name: "digest",
			args: []string{"--set", "controllerManager.image.digest=" + digest + ",controllerManager.ownCredentialGuard.action=off"},
			images: map[string]string{
				"rel-controller-manager": "ghcr.io/holdfast-dist/karmada-controller-manager@" + digest,
			},
			guard:    []string{"--own-credential-guard-action=off"},
			replicas: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			for i, a := range args {
				if a == karmadaHAValues {
					args[i] = f.path(a)
				}
			}
			objs := f.render(t, f.karmada, karmadaNamespace, args...)
			for name, want := range tc.images {
				d := objs.deployment(t, name)
				if got := d.Spec.Template.Spec.Containers[0].Image; got != want {
					t.Errorf("Deployment %s image %s, want %s", name, got, want)
				}
			}
			for _, name := range tc.absent {
				if _, ok := objs["Deployment/"+name]; ok {
					t.Errorf("Deployment %s rendered; the component is not enabled", name)
				}
			}
			cm := objs.deployment(t, "rel-controller-manager")
			c := container(t, cm, "rel-controller-manager")
			var guard []string
			for _, arg := range c.Command {
				if strings.HasPrefix(arg, "--own-credential-guard-") {
					guard = append(guard, arg)
				}
			}
			if !slices.Equal(guard, tc.guard) {
				t.Errorf("guard flags %q, want %q", guard, tc.guard)
			}
			if c.Command[0] != "/bin/karmada-controller-manager" {
				t.Errorf("command %q: upstream's binary path changed", c.Command[0])
			}
			switch {
			case tc.readiness && (c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil ||
				c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.IntValue() != 10357):
				t.Errorf("readiness probe %+v, want GET /readyz on 10357 (the health probe port)", c.ReadinessProbe)
			case !tc.readiness && c.ReadinessProbe != nil:
				t.Errorf("readiness probe %+v with action other than unhealthy; upstream has none", c.ReadinessProbe)
			}
			if got := *cm.Spec.Replicas; got != tc.replicas {
				t.Errorf("replicas %d, want %d", got, tc.replicas)
			}
			var secrets []string
			for _, s := range cm.Spec.Template.Spec.ImagePullSecrets {
				secrets = append(secrets, s.Name)
			}
			if !slices.Equal(secrets, tc.pullSecret) {
				t.Errorf("imagePullSecrets %q, want %q", secrets, tc.pullSecret)
			}
		})
	}
}

// TestKarmadaRollbackToUpstreamImage is the drop-in rule for the chart: a
// user who points controllerManager.image back at upstream's image and
// keeps the default values must get a controller-manager upstream's binary
// starts, so the chart renders no flag only holdfast's binary knows. The
// rendered command is run, with --help after it, by the real binaries
// (`make e2e-binaries` builds them): pflag parses every flag before cobra
// looks at --help, so exit 0 means upstream's parser accepted each argument
// and "unknown flag" names the first it refused, while nothing connects to
// an API server or reads the kubeconfig, and Validate (which the binary runs
// before starting) is left to the overlay's own tests.
func TestKarmadaRollbackToUpstreamImage(t *testing.T) {
	f := setup(t)
	bins := map[binaryBuild]string{}
	for _, b := range []binaryBuild{pristine, patched} {
		bins[b] = controllerManager(t, f.root, f.karmada.Pin.Version, b)
	}
	upstreamImage := "controllerManager.image.registry=docker.io,controllerManager.image.repository=karmada/karmada-controller-manager," +
		"controllerManager.image.tag=" + f.karmada.Pin.Version
	guardSet := []string{"--own-credential-guard-action=unhealthy", "--own-credential-guard-threshold=3", "--own-credential-guard-window=2m", "--own-credential-guard-min-duration=90s"}
	for _, tc := range []struct {
		name    string
		args    []string
		image   string
		guard   []string      // the guard flags rendered
		accepts []binaryBuild // binaries whose flag parsing takes the command
		refuses []binaryBuild // binaries that must refuse it with "unknown flag"
	}{
		{
			name:    "upstream image, default values",
			args:    []string{"--set", upstreamImage},
			image:   "docker.io/karmada/karmada-controller-manager:" + f.karmada.Pin.Version,
			accepts: []binaryBuild{pristine, patched},
		},
		{
			name:    "holdfast image, default values",
			image:   holdfastImage("karmada-controller-manager", f.karmada.AppVersion),
			accepts: []binaryBuild{pristine, patched},
		},
		{
			// Opting in renders the flags, and only holdfast's binary takes
			// them: docs/charts.md says to unset them before rolling back.
			name:    "holdfast image, guard values set",
			args:    []string{"--values", karmadaHAValues},
			image:   holdfastImage("karmada-controller-manager", f.karmada.AppVersion),
			guard:   guardSet,
			accepts: []binaryBuild{patched},
			refuses: []binaryBuild{pristine},
		},
		{
			name:    "one guard value set",
			args:    []string{"--set", "controllerManager.ownCredentialGuard.window=90s"},
			image:   holdfastImage("karmada-controller-manager", f.karmada.AppVersion),
			guard:   []string{"--own-credential-guard-window=90s"},
			accepts: []binaryBuild{patched},
			refuses: []binaryBuild{pristine},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			for i, a := range args {
				if a == karmadaHAValues {
					args[i] = f.path(a)
				}
			}
			objs := f.render(t, f.karmada, karmadaNamespace, args...)
			c := container(t, objs.deployment(t, "rel-controller-manager"), "rel-controller-manager")
			if c.Image != tc.image {
				t.Errorf("image %s, want %s", c.Image, tc.image)
			}
			var guard []string
			for _, arg := range c.Command {
				if strings.HasPrefix(arg, "--own-credential-guard-") {
					guard = append(guard, arg)
				}
			}
			if !slices.Equal(guard, tc.guard) {
				t.Errorf("guard flags %q, want %q", guard, tc.guard)
			}
			if len(c.Command) == 0 || c.Command[0] != "/bin/karmada-controller-manager" {
				t.Fatalf("command %q: upstream's binary path changed", c.Command)
			}
			for _, b := range tc.accepts {
				if _, err := parseFlags(t, bins[b], c.Command[1:]); err != nil {
					t.Errorf("%s karmada-controller-manager refuses the rendered command %q: %v", b, c.Command[1:], err)
				}
			}
			for _, b := range tc.refuses {
				out, err := parseFlags(t, bins[b], c.Command[1:])
				if err == nil || !strings.Contains(out, "unknown flag: --own-credential-guard-") {
					t.Errorf("%s karmada-controller-manager took %q (%v); want it to refuse the guard flags as unknown", b, c.Command[1:], err)
				}
			}
		})
	}
}

// TestKarmadaEstimatorAndAgent: the chart deploys holdfast's
// karmada-scheduler-estimator and karmada-agent (0007), and mounts the
// estimator's member kubeconfig as a directory: a subPath mount never
// receives the kubelet's update of a Secret (kubernetes#50345), so a
// rotated member kubeconfig would never reach the estimator. The drop-in
// rule: the rendered commands are taken by upstream's binaries as well as
// holdfast's (a rollback to upstream's image keeps starting), and the file
// --kubeconfig names is the Secret's key inside the mounted directory.
func TestKarmadaEstimatorAndAgent(t *testing.T) {
	f := setup(t)
	hv := f.karmada.AppVersion
	for _, tc := range []struct {
		name       string
		args       []string
		deployment string
		binary     string
		kubeconfig string // the flag naming the kubeconfig
		mountPath  string // where the kubeconfig Secret is mounted, as a directory
		secret     string
		key        string
	}{
		{
			name: "scheduler-estimator",
			// --set on a list element replaces the element: every field the
			// template reads is given.
			args: []string{"--set", "components={schedulerEstimator},schedulerEstimator.memberClusters[0].clusterName=member1," +
				"schedulerEstimator.memberClusters[0].replicaCount=1," +
				"schedulerEstimator.memberClusters[0].kubeconfig.server=https://member1.example:6443," +
				"schedulerEstimator.memberClusters[0].kubeconfig.caCrt=ca,schedulerEstimator.memberClusters[0].kubeconfig.crt=crt," +
				"schedulerEstimator.memberClusters[0].kubeconfig.key=key"},
			deployment: "karmada-scheduler-estimator-member1",
			binary:     "karmada-scheduler-estimator",
			kubeconfig: "--kubeconfig=/etc/member-kubeconfig/member1-kubeconfig",
			mountPath:  "/etc/member-kubeconfig",
			secret:     "member1-kubeconfig",
			key:        "member1-kubeconfig",
		},
		{
			name:       "agent",
			args:       []string{"--set", "installMode=agent,agent.clusterName=member1,agent.kubeconfig.server=https://karmada.example:5443"},
			deployment: "rel", // agent mode names everything after the release
			binary:     "karmada-agent",
			kubeconfig: "--karmada-kubeconfig=/etc/kubeconfig/kubeconfig",
			mountPath:  "/etc/kubeconfig",
			secret:     "rel-kubeconfig",
			key:        "kubeconfig",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := f.render(t, f.karmada, karmadaNamespace, tc.args...)
			d := objs.deployment(t, tc.deployment)
			c := d.Spec.Template.Spec.Containers[0]
			if want := holdfastImage(tc.binary, hv); c.Image != want {
				t.Errorf("image %s, want %s", c.Image, want)
			}
			if len(c.Command) == 0 || c.Command[0] != "/bin/"+tc.binary {
				t.Fatalf("command %q: upstream's binary path changed", c.Command)
			}
			if !slices.Contains(c.Command, tc.kubeconfig) {
				t.Errorf("command %q lacks %s", c.Command, tc.kubeconfig)
			}
			var volume string
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret != nil && v.Secret.SecretName == tc.secret {
					volume = v.Name
				}
			}
			if volume == "" {
				t.Fatalf("no volume of Secret %s", tc.secret)
			}
			mounted := false
			for _, m := range c.VolumeMounts {
				if m.Name != volume {
					continue
				}
				mounted = true
				if m.SubPath != "" || m.SubPathExpr != "" {
					t.Errorf("Secret %s mounted with subPath %q: the kubelet never updates it", tc.secret, m.SubPath+m.SubPathExpr)
				}
				if m.MountPath != tc.mountPath {
					t.Errorf("Secret %s mounted at %s, want %s", tc.secret, m.MountPath, tc.mountPath)
				}
			}
			if !mounted {
				t.Errorf("Secret %s is not mounted", tc.secret)
			}
			var secret corev1.Secret
			if err := yaml.Unmarshal(objs["Secret/"+tc.secret], &secret); err != nil {
				t.Fatal(err)
			}
			if _, ok := secret.StringData[tc.key]; !ok {
				if _, ok := secret.Data[tc.key]; !ok {
					t.Errorf("Secret %s has no key %s: the file %s names would not exist", tc.secret, tc.key, tc.kubeconfig)
				}
			}
			for _, b := range []binaryBuild{pristine, patched} {
				bin := karmadaBinary(t, f.root, f.karmada.Pin.Version, b, tc.binary)
				if _, err := parseFlags(t, bin, c.Command[1:]); err != nil {
					t.Errorf("%s %s refuses the rendered command %q: %v", b, tc.binary, c.Command[1:], err)
				}
			}
		})
	}
}

// binaryBuild says which of the two builds of the default pin a binary is.
type binaryBuild string

const (
	patched  binaryBuild = "patched"
	pristine binaryBuild = "pristine"
)

// controllerManager returns the karmada-controller-manager of build b (see
// karmadaBinary).
func controllerManager(t *testing.T, root, version string, b binaryBuild) string {
	t.Helper()
	return karmadaBinary(t, root, version, b, "karmada-controller-manager")
}

// karmadaBinary returns the Karmada binary name of build b where
// `holdfast build --upstream karmada [--pristine]` leaves it, under
// $HOLDFAST_E2E_BIN when set as the e2e suites read it (for any version,
// where internal/pipeline/build.LocateDefault finds the default pin's). A
// missing binary fails the test with how to build it, so a forgotten build
// cannot pass as green.
func karmadaBinary(t *testing.T, root, version string, b binaryBuild, name string) string {
	t.Helper()
	dir := os.Getenv("HOLDFAST_E2E_BIN")
	if dir == "" {
		dir = filepath.Join(root, build.DefaultOut)
	}
	folder, flag := "karmada-"+version, ""
	if b == pristine {
		folder, flag = folder+"-pristine", " --pristine"
	}
	path := filepath.Join(dir, folder, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s binary %s: %v; build them first: make e2e-binaries (or go run ./cmd/holdfast build --upstream karmada%s)", b, path, err, flag)
	}
	return path
}

// parseFlags runs bin with args and --help: pflag parses every flag before
// cobra acts on --help, so the binary prints its usage and exits 0 only if
// it knows every flag and can parse its value.
func parseFlags(t *testing.T, bin string, args []string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, append(slices.Clone(args), "--help")...)
	// No kubeconfig or in-cluster settings of the test's environment reach it.
	cmd.Env = []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		// cobra prints the usage after the error; the error line is the news.
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "Error:") {
				err = fmt.Errorf("%w: %s", err, line)
			}
		}
	case !strings.Contains(string(out), "Usage:"):
		err = fmt.Errorf("exit 0 without printing its usage:\n%s", out)
	}
	return string(out), err
}

// workerEnv is the manager container's environment as name=value (an
// entry with valueFrom shows an empty value).
func workerEnv(c corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	return env
}

func TestWorkerOperatorRendersHubsGuardAndMetrics(t *testing.T) {
	f := setup(t)
	image := holdfastImage("worker-operator", f.operator.AppVersion)
	base := []string{
		"CLUSTER_NAME=worker-1",
		"HUB_PROJECT_NAMESPACE=kubeslice-acme",
		"HUB_HOST_ENDPOINT=https://hub-a.example.com:6443",
		"ENABLE_WEBHOOKS=false",
	}
	guardDefaults := []string{"OWN_CREDENTIAL_GUARD_ACTION=exit", "OWN_CREDENTIAL_GUARD_THRESHOLD=5", "OWN_CREDENTIAL_GUARD_WINDOW=5m", "OWN_CREDENTIAL_GUARD_MIN_DURATION=1m"}
	primaryVolume := corev1.Volume{Name: "hub-token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "hub-primary-token", DefaultMode: ptr(int32(420))}}}
	secondaryVolume := corev1.Volume{Name: "hub-secondary-token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "hub-secondary-token", DefaultMode: ptr(int32(420)), Optional: ptr(true)}}}
	primaryMount := corev1.VolumeMount{Name: "hub-token", MountPath: "/var/run/secrets/kubernetes.io/hub-serviceaccount", ReadOnly: true}
	secondaryMount := corev1.VolumeMount{Name: "hub-secondary-token", MountPath: "/var/run/secrets/kubernetes.io/hub-secondary-serviceaccount", ReadOnly: true}

	for _, tc := range []struct {
		name    string
		args    []string
		image   string
		env     []string
		volumes []corev1.Volume
		mounts  []corev1.VolumeMount
		cmdArgs []string
		objects []string // rendered besides the Deployment
		absent  []string
	}{
		{
			name:    "one hub: failover following off, no second volume",
			args:    []string{"--values", workerPrimary},
			image:   image,
			env:     append(slices.Clone(base), guardDefaults...),
			volumes: []corev1.Volume{primaryVolume},
			mounts:  []corev1.VolumeMount{primaryMount},
			cmdArgs: []string{"--leader-elect", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081"},
			objects: []string{"ServiceAccount/kubeslice-controller-manager", "ClusterRole/kubeslice-manager-role",
				"ClusterRoleBinding/kubeslice-manager-rolebinding", "Role/kubeslice-leader-election-role",
				"RoleBinding/kubeslice-leader-election-rolebinding", "Service/kubeslice-operator-metrics"},
			absent: []string{"ServiceMonitor/kubeslice-operator"},
		},
		{
			name:  "HA: secondary hub with its own Secret, default tuning",
			args:  []string{"--values", workerHA},
			image: image,
			env: append(append(slices.Clone(base),
				"HUB_SECONDARY_HOST_ENDPOINT=https://hub-b.example.com:6443",
				"HUB_RESOLVE_INTERVAL=10s", "HUB_RESOLVE_TIMEOUT=5s", "HUB_SWITCH_CONFIRMATIONS=2"), guardDefaults...),
			volumes: []corev1.Volume{primaryVolume, secondaryVolume},
			mounts:  []corev1.VolumeMount{primaryMount, secondaryMount},
			cmdArgs: []string{"--leader-elect", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081"},
		},
		{
			name: "HA tuned, guard unhealthy, digest, ServiceMonitor, extra env",
			args: []string{"--values", workerHA, "--values", `{"hub":{"resolveInterval":"30s","resolveTimeout":"3s","switchConfirmations":3},` +
				`"ownCredentialGuard":{"action":"unhealthy","threshold":10,"window":"10m","minDuration":"30s"},` +
				`"image":{"digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},` +
				`"metrics":{"port":9090,"serviceMonitor":{"enabled":true}},"leaderElection":true,"replicaCount":2,` +
				`"extraEnv":[{"name":"AVESHA_GW_SIDECAR_IMAGE","value":"example.com/gw-sidecar:1.0"}]}`},
			image: "ghcr.io/holdfast-dist/worker-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			env: append(slices.Clone(base),
				"HUB_SECONDARY_HOST_ENDPOINT=https://hub-b.example.com:6443",
				"HUB_RESOLVE_INTERVAL=30s", "HUB_RESOLVE_TIMEOUT=3s", "HUB_SWITCH_CONFIRMATIONS=3",
				"OWN_CREDENTIAL_GUARD_ACTION=unhealthy", "OWN_CREDENTIAL_GUARD_THRESHOLD=10", "OWN_CREDENTIAL_GUARD_WINDOW=10m", "OWN_CREDENTIAL_GUARD_MIN_DURATION=30s",
				"AVESHA_GW_SIDECAR_IMAGE=example.com/gw-sidecar:1.0"),
			volumes: []corev1.Volume{primaryVolume, secondaryVolume},
			mounts:  []corev1.VolumeMount{primaryMount, secondaryMount},
			cmdArgs: []string{"--leader-elect", "--metrics-bind-address=:9090", "--health-probe-bind-address=:8081"},
			objects: []string{"ServiceMonitor/kubeslice-operator"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			for i, a := range args {
				switch {
				case a == workerPrimary || a == workerHA:
					args[i] = f.path(a)
				case strings.HasPrefix(a, "{"):
					args[i] = valuesFile(t, a)
				}
			}
			objs := f.render(t, f.operator, workerNamespace, args...)
			d := objs.deployment(t, "kubeslice-operator")
			c := container(t, d, "manager")
			if c.Image != tc.image {
				t.Errorf("image %s, want %s", c.Image, tc.image)
			}
			if got := workerEnv(c); !slices.Equal(got, tc.env) {
				t.Errorf("env\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.env, "\n  "))
			}
			if !reflect.DeepEqual(d.Spec.Template.Spec.Volumes, tc.volumes) {
				t.Errorf("volumes %+v, want %+v", d.Spec.Template.Spec.Volumes, tc.volumes)
			}
			if !reflect.DeepEqual(c.VolumeMounts, tc.mounts) {
				t.Errorf("mounts %+v, want %+v", c.VolumeMounts, tc.mounts)
			}
			if !slices.Equal(c.Command, []string{"/manager"}) || !slices.Equal(c.Args, tc.cmdArgs) {
				t.Errorf("command %q args %q, want [/manager] %q", c.Command, c.Args, tc.cmdArgs)
			}
			if d.Namespace != workerNamespace || d.Spec.Template.Spec.ServiceAccountName != "kubeslice-controller-manager" {
				t.Errorf("Deployment in %q as %q, want upstream's kubeslice-system and kubeslice-controller-manager",
					d.Namespace, d.Spec.Template.Spec.ServiceAccountName)
			}
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("readiness probe %+v: the guard's unhealthy action reports through /readyz", c.ReadinessProbe)
			}
			for _, name := range tc.objects {
				if _, ok := objs[name]; !ok {
					t.Errorf("%s not rendered (have %s)", name, objs.names())
				}
			}
			for _, name := range tc.absent {
				if _, ok := objs[name]; ok {
					t.Errorf("%s rendered", name)
				}
			}
		})
	}
}

// The ClusterRole's rules are upstream's config/rbac/role.yaml, as the
// pinned tree has it; staging copies the file and the template reads it.
func TestWorkerOperatorRBACIsUpstreams(t *testing.T) {
	f := setup(t)
	objs := f.render(t, f.operator, workerNamespace, "--values", f.path(workerPrimary))
	tree := filepath.Join(f.workDir, "trees", "workeroperator-"+f.operator.Pin.Version)
	for _, tc := range []struct{ object, upstream string }{
		{"ClusterRole/kubeslice-manager-role", "config/rbac/role.yaml"},
		{"Role/kubeslice-leader-election-role", "config/rbac/leader_election_role.yaml"},
	} {
		data, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(tc.upstream)))
		if err != nil {
			t.Fatal(err)
		}
		var want, got rbacv1.ClusterRole
		if err := yaml.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(objs[tc.object], &got); err != nil {
			t.Fatal(err)
		}
		if len(want.Rules) == 0 || !reflect.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("%s rules differ from upstream's %s:\n got %+v\nwant %+v", tc.object, tc.upstream, got.Rules, want.Rules)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// valuesFile writes JSON values (YAML is a superset) to a file for --values.
// Not under t.TempDir(): a subtest's name may hold a comma, and helm splits
// --values at commas.
func valuesFile(t *testing.T, json string) string {
	t.Helper()
	f, err := os.CreateTemp(shared.workDir, "values-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(json); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
