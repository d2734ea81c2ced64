package standin

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

// Binary names in inputs.bins.
const (
	binEtcd                  = "etcd"
	binKubeAPIServer         = "kube-apiserver"
	binKubeControllerManager = "kube-controller-manager"
	binKubectl               = "kubectl"
	binCfssl                 = "cfssl"
	binCfssljson             = "cfssljson"
	binCoreDNS               = "coredns"
	binHooktools             = "hooktools"
	binBusybox               = "busybox"
	binBash                  = "bash"
	binWorkerOperator        = "worker-operator"
)

// inputs are the files the images are made of.
type inputs struct {
	// bins maps a binary's name (the bin* constants and the Karmada
	// binaries' names) to its path.
	bins map[string]string
	// workerTree is the pristine worker-operator tree (files/, scripts/).
	workerTree string
	// debFrom says where busybox and bash came from (the Debian
	// package and version), by binary name.
	debFrom map[string]string
}

// def is one image to build: its name and everything but the root
// filesystem and the fixed date.
type def struct {
	ref string
	in  image.PlainInput
}

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

// Paths of the commands in the images, where upstream's images have them.
const (
	// Kubernetes' server images (build/server-image) copy each binary to
	// /usr/local/bin, on PATH: the chart's `command: [kube-apiserver]`
	// finds it there.
	kubeBinDir = "/usr/local/bin"
	// Bitnami's images install an application under /opt/bitnami/<app>
	// and put its bin/ first on PATH.
	bitnamiKubectlDir = "/opt/bitnami/kubectl/bin"
)

// cfsslApplets and kubectlApplets are the external commands the chart's
// scripts run in each image besides bash (echo, [, [[, set, while are
// builtins); each is a link to busybox in /bin, as busybox --install lays
// them.
var (
	cfsslApplets   = []string{"sh", "mkdir", "cp", "base64", "tr", "sed", "sleep"}
	kubectlApplets = []string{"sh", "sed", "sleep"}
)

// defs lists the images of the catalogue, made from in.
func defs(in inputs) ([]def, error) {
	bin := func(name string) (string, error) {
		p, ok := in.bins[name]
		if !ok || p == "" {
			return "", fmt.Errorf("stand-in images: no %s binary", name)
		}
		return p, nil
	}
	var err error
	must := func(name string) string {
		p, e := bin(name)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	env := image.DefaultEnv()
	one := func(by string, files ...image.File) []image.Layer {
		return []image.Layer{{CreatedBy: by, Files: files}}
	}
	exe := func(name, src string) image.File { return image.File{Name: name, Source: src, Mode: 0o755} }
	karmada := func(ref, binary string) def {
		spec := image.Specs["karmada"]
		p := spec.BinaryPath(binary)
		return def{ref, image.PlainInput{
			Name: binary, Env: env, User: spec.User, Entrypoint: spec.Entrypoint, WorkingDir: spec.WorkingDir,
			Layers: one("COPY "+binary+" "+p+" (pristine tree, internal/pipeline/treebin)", exe(p, must(binary))),
		}}
	}
	kube := func(ref, binary string) def {
		return def{ref, image.PlainInput{
			Name: binary, Env: env,
			Layers: one("COPY "+binary+" "+kubeBinDir+"/ (tool cache)", exe(kubeBinDir+"/"+binary, must(binary))),
		}}
	}
	shells := func(applets []string) []image.File {
		files := []image.File{exe("/bin/busybox", must(binBusybox)), exe("/bin/bash", must(binBash))}
		for _, a := range applets {
			files = append(files, image.File{Name: "/bin/" + a, Symlink: "busybox"})
		}
		return files
	}
	shellLayer := "busybox (" + in.debFrom[binBusybox] + ") with the applets the chart's scripts run, bash (" + in.debFrom[binBash] + ")"
	worker := image.Specs["workeroperator"]
	workerPath := worker.BinaryPath(binWorkerOperator)
	ds := []def{
		{RefEtcd, image.PlainInput{
			Name: binEtcd, Env: env,
			Layers: one("COPY etcd /usr/local/bin/ (tool cache)", exe("/usr/local/bin/etcd", must(binEtcd))),
		}},
		kube(RefKubeAPIServer, binKubeAPIServer),
		kube(RefKubeControllerManager, binKubeControllerManager),
		karmada(RefAggregatedAPIServer, "karmada-aggregated-apiserver"),
		karmada(RefScheduler, "karmada-scheduler"),
		karmada(RefWebhook, "karmada-webhook"),
		{RefCfssl, image.PlainInput{
			// Upstream's Dockerfile: FROM golang, WORKDIR /workdir, the
			// binaries copied to /usr/bin, ENTRYPOINT ["cfssl"], root.
			Name: "cfssl", Env: env, Entrypoint: []string{"cfssl"}, WorkingDir: "/workdir",
			Layers: []image.Layer{
				{CreatedBy: shellLayer, Files: append(shells(cfsslApplets), image.File{Name: "/workdir", Dir: true, Mode: 0o755})},
				{CreatedBy: "cfssl, cfssljson " + cfsslVersion + " and the openssl/curl stand-ins (internal/harness/standin/hooktools)", Files: []image.File{
					exe("/usr/bin/cfssl", must(binCfssl)),
					exe("/usr/bin/cfssljson", must(binCfssljson)),
					exe("/usr/bin/hooktools", must(binHooktools)),
					{Name: "/usr/bin/openssl", Symlink: "hooktools"},
					{Name: "/usr/bin/curl", Symlink: "hooktools"},
				}},
			},
		}},
		{RefKubectl, image.PlainInput{
			// Bitnami's kubectl: USER 1001 (group root), HOME unset so /,
			// and /.kube made group-writable for kubectl's cache.
			Name: "kubectl", Entrypoint: []string{"kubectl"}, User: "1001",
			Env: []string{"PATH=" + bitnamiKubectlDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Layers: []image.Layer{
				{CreatedBy: shellLayer, Files: append(shells(kubectlApplets), image.File{Name: "/.kube", Dir: true, Mode: 0o775})},
				{CreatedBy: "kubectl v1.35.3 (tool cache)", Files: []image.File{exe(bitnamiKubectlDir+"/kubectl", must(binKubectl))}},
			},
		}},
		{RefCoreDNS, image.PlainInput{
			// CoreDNS's Dockerfile: distroless static nonroot, /coredns,
			// USER nonroot, WORKDIR /, ENTRYPOINT ["/coredns"].
			Name: binCoreDNS, Env: env, Entrypoint: []string{"/coredns"}, User: "65532:65532", WorkingDir: "/",
			Layers: one("COPY coredns /coredns", exe("/coredns", must(binCoreDNS))),
		}},
		karmada(RefPristineControllerManager, "karmada-controller-manager"),
		karmada(RefPristineSearch, "karmada-search"),
		karmada(RefPristineMetricsAdapter, "karmada-metrics-adapter"),
		{RefPristineWorkerOperator, image.PlainInput{
			Name: binWorkerOperator, Env: append(append([]string(nil), env...), worker.Env...),
			Entrypoint: worker.Entrypoint, User: worker.User, WorkingDir: worker.WorkingDir,
			Tree: in.workerTree, TreeFiles: worker.TreeFiles,
			Layers: one("COPY manager "+workerPath+" (pristine tree, internal/pipeline/treebin)", exe(workerPath, must(binWorkerOperator))),
		}},
	}
	if err != nil {
		return nil, err
	}
	for i := range ds {
		ds[i].in.Platform = amd64
	}
	return ds, nil
}
