package standin

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// contract is what the charts' pods need of an image: every command their
// `command` lines and scripts run must resolve in it (absolute, or on the
// image's PATH), and the config upstream's image has.
type contract struct {
	commands   []string
	entrypoint []string
	user       string
	workdir    string
	// binary is the input that must be at commands[0] (the stand-in's
	// own program, not another's).
	binary string
}

var contracts = map[string]contract{
	RefEtcd:                  {commands: []string{"/usr/local/bin/etcd"}, binary: binEtcd},
	RefKubeAPIServer:         {commands: []string{"kube-apiserver"}, binary: binKubeAPIServer},
	RefKubeControllerManager: {commands: []string{"kube-controller-manager"}, binary: binKubeControllerManager},
	RefAggregatedAPIServer:   {commands: []string{"/bin/karmada-aggregated-apiserver"}, binary: "karmada-aggregated-apiserver"},
	RefScheduler:             {commands: []string{"/bin/karmada-scheduler"}, binary: "karmada-scheduler"},
	RefWebhook:               {commands: []string{"/bin/karmada-webhook"}, binary: "karmada-webhook"},
	// The pre-install job's init container and karmada-apiserver's wait.
	RefCfssl: {
		commands:   []string{"cfssl", "/bin/sh", "bash", "mkdir", "cp", "openssl", "cfssljson", "base64", "tr", "sed", "curl", "sleep"},
		entrypoint: []string{"cfssl"}, workdir: "/workdir", binary: binCfssl,
	},
	// Every wait init container, the static-resource, pre-install,
	// pre-upgrade and post-delete jobs.
	RefKubectl: {
		commands:   []string{"kubectl", "/bin/sh", "bash", "sed", "sleep"},
		entrypoint: []string{"kubectl"}, user: "1001", binary: binKubectl,
	},
	RefCoreDNS:                   {commands: []string{"/coredns"}, entrypoint: []string{"/coredns"}, user: "65532:65532", workdir: "/", binary: binCoreDNS},
	RefPristineControllerManager: {commands: []string{"/bin/karmada-controller-manager"}, binary: "karmada-controller-manager"},
	RefPristineSearch:            {commands: []string{"/bin/karmada-search"}, binary: "karmada-search"},
	RefPristineMetricsAdapter:    {commands: []string{"/bin/karmada-metrics-adapter"}, binary: "karmada-metrics-adapter"},
	RefPristineWorkerOperator:    {commands: []string{"/manager"}, entrypoint: []string{"/manager"}, user: "65532:65532", workdir: "/", binary: binWorkerOperator},
}

// fakeInputs writes a small distinct file for every binary and a pristine
// worker tree.
func fakeInputs(t *testing.T) inputs {
	t.Helper()
	dir := t.TempDir()
	in := inputs{bins: map[string]string{}, debFrom: map[string]string{binBusybox: "busybox-static_test", binBash: "bash-static_test"}, workerTree: filepath.Join(dir, "tree")}
	for _, name := range []string{
		binEtcd, binKubeAPIServer, binKubeControllerManager, binKubectl, binCfssl, binCfssljson, binCoreDNS,
		binHooktools, binBusybox, binBash, binWorkerOperator,
		"karmada-aggregated-apiserver", "karmada-scheduler", "karmada-webhook",
		"karmada-controller-manager", "karmada-search", "karmada-metrics-adapter",
	} {
		p := filepath.Join(dir, "bin", name)
		writeFile(t, p, "fake "+name)
		in.bins[name] = p
	}
	writeFile(t, filepath.Join(in.workerTree, "HOLDFAST-PROVENANCE"), "kind: pristine\n")
	writeFile(t, filepath.Join(in.workerTree, "files", "manifests", "gateway.yaml"), "kind: Deployment\n")
	writeFile(t, filepath.Join(in.workerTree, "scripts", "cleanup.sh"), "#!/bin/sh\n")
	return in
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCatalogueAndDefinitionsAgree(t *testing.T) {
	ds, err := defs(fakeInputs(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.ref)
	}
	if !slices.Equal(got, Refs()) {
		t.Errorf("definitions %v, catalogue %v", got, Refs())
	}
	for _, ref := range Refs() {
		if _, ok := contracts[ref]; !ok {
			t.Errorf("%s has no contract in this test", ref)
		}
	}
}

func TestDefinitionsNeedEveryBinary(t *testing.T) {
	in := fakeInputs(t)
	delete(in.bins, binKubeControllerManager)
	if _, err := defs(in); err == nil || err.Error() != "stand-in images: no kube-controller-manager binary" {
		t.Errorf("err = %v, want the missing binary named", err)
	}
}

func TestLayoutsHoldWhatTheChartsRun(t *testing.T) {
	in := fakeInputs(t)
	out := t.TempDir()
	imgs, err := write(t.Context(), Options{Out: out}, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) != len(Catalogue) {
		t.Fatalf("%d images, want %d", len(imgs), len(Catalogue))
	}
	for ref, c := range contracts {
		t.Run(ref, func(t *testing.T) {
			img := imgs[ref]
			if dir, _ := LayoutDir(out, ref); img.Layout != dir || !img.Built || img.Digest == "" {
				t.Fatalf("image %+v, want built in %s", img, dir)
			}
			fs := readLayout(t, img.Layout)
			if fs.name != ref {
				t.Errorf("io.containerd.image.name %q, want %q", fs.name, ref)
			}
			if !reflect.DeepEqual(fs.config.Entrypoint, c.entrypoint) || fs.config.User != c.user || fs.config.WorkingDir != c.workdir {
				t.Errorf("config entrypoint %q user %q workdir %q, want %q %q %q",
					fs.config.Entrypoint, fs.config.User, fs.config.WorkingDir, c.entrypoint, c.user, c.workdir)
			}
			for _, cmd := range c.commands {
				if _, ok := fs.lookPath(cmd); !ok {
					t.Errorf("command %q does not resolve to an executable (PATH %s)", cmd, fs.env("PATH"))
				}
			}
			p, _ := fs.lookPath(c.commands[0])
			_, real, _ := fs.resolve(p)
			if got, want := string(fs.small[real]), "fake "+c.binary; got != want {
				t.Errorf("%s holds %q, want %q", p, got, want)
			}
			if fs.config.Labels[AnnotationStandIn] == "" {
				t.Errorf("config labels %v lack %s", fs.config.Labels, AnnotationStandIn)
			}
		})
	}
	// The hook images' bash is bash, not busybox ash (whose [[ ]] is
	// test(1) and ends the wait scripts' loops at once), and sh is busybox.
	for _, ref := range []string{RefCfssl, RefKubectl} {
		fs := readLayout(t, imgs[ref].Layout)
		for cmd, want := range map[string]string{"bash": "fake " + binBash, "sh": "fake " + binBusybox} {
			p, _ := fs.lookPath(cmd)
			if _, real, _ := fs.resolve(p); string(fs.small[real]) != want {
				t.Errorf("%s: %s is %q, want %q", ref, cmd, fs.small[real], want)
			}
		}
	}
	// Upstream's worker image carries its tree's files and points at them.
	fs := readLayout(t, imgs[RefPristineWorkerOperator].Layout)
	for _, f := range []string{"/files/manifests/gateway.yaml", "/scripts/cleanup.sh"} {
		if _, ok := fs.files[f]; !ok {
			t.Errorf("worker image lacks %s", f)
		}
	}
	if fs.env("MANIFEST_PATH") != "/files/manifests" || fs.env("SCRIPT_PATH") != "/scripts" {
		t.Errorf("worker image env %v", fs.config.Env)
	}
	// bitnami's kubectl runs as 1001 with HOME=/ and writes /.kube.
	if h := readLayout(t, imgs[RefKubectl].Layout).files["/.kube"]; h == nil || h.Mode&0o070 != 0o070 {
		t.Errorf("kubectl image /.kube %+v, want group-writable", h)
	}
}

func TestBuildIsIdempotentAndRebuildsWhatChanged(t *testing.T) {
	in := fakeInputs(t)
	out := t.TempDir()
	first, err := write(t.Context(), Options{Out: out}, in)
	if err != nil {
		t.Fatal(err)
	}
	second, err := write(t.Context(), Options{Out: out}, in)
	if err != nil {
		t.Fatal(err)
	}
	for ref, img := range second {
		if img.Built || img.Digest != first[ref].Digest {
			t.Errorf("%s: second call built=%v digest %s (first %s), want the layout kept", ref, img.Built, img.Digest, first[ref].Digest)
		}
	}
	// New content under the same path: only the images copying it change.
	writeFile(t, in.bins[binKubectl], "fake kubectl, rebuilt")
	third, err := write(t.Context(), Options{Out: out}, in)
	if err != nil {
		t.Fatal(err)
	}
	for ref, img := range third {
		want := ref == RefKubectl
		if img.Built != want || (img.Digest != first[ref].Digest) != want {
			t.Errorf("%s after kubectl changed: built=%v digest changed=%v, want %v", ref, img.Built, img.Digest != first[ref].Digest, want)
		}
	}
	// A layout removed behind the stamp's back is rebuilt.
	if err := os.RemoveAll(third[RefEtcd].Layout); err != nil {
		t.Fatal(err)
	}
	fourth, err := write(t.Context(), Options{Out: out}, in)
	if err != nil {
		t.Fatal(err)
	}
	if !fourth[RefEtcd].Built || fourth[RefEtcd].Digest != first[RefEtcd].Digest {
		t.Errorf("etcd after its layout was removed: %+v, want rebuilt with the same digest", fourth[RefEtcd])
	}
}
