package standin

import "strings"

// Kind says what a stand-in stands in for.
type Kind string

const (
	// Unshipped is an image a chart deploys that holdfast does not ship
	// (Karmada's etcd, apiservers, scheduler, webhook, the hook jobs'
	// images) or that the node needs (cluster DNS).
	Unshipped Kind = "unshipped"
	// Pristine is upstream's own image of a binary holdfast ships, built
	// from the pristine tree: what a user runs before the drop-in.
	Pristine Kind = "pristine"
)

// Entry is one image of the catalogue.
type Entry struct {
	// Ref is the name the charts render (or, for cluster DNS and the
	// pristine images, the name upstream publishes them under).
	Ref  string
	Kind Kind
	// From says what the stand-in is made of; Differs how it differs
	// from the image it replaces (docs/node-images.md).
	From, Differs string
}

// Names the charts render with default values (host install mode), and
// upstream's names of the pristine images. The Karmada chart's render test
// (chart_e2e_test.go) keeps the unshipped ones equal to the chart.
const (
	RefEtcd                  = "registry.k8s.io/etcd:3.6.6-0"
	RefKubeAPIServer         = "registry.k8s.io/kube-apiserver:v1.35.2"
	RefKubeControllerManager = "registry.k8s.io/kube-controller-manager:v1.35.2"
	RefAggregatedAPIServer   = "docker.io/karmada/karmada-aggregated-apiserver:v1.18.2"
	RefScheduler             = "docker.io/karmada/karmada-scheduler:v1.18.2"
	RefWebhook               = "docker.io/karmada/karmada-webhook:v1.18.2"
	RefCfssl                 = "docker.io/cfssl/cfssl:latest"
	RefKubectl               = "docker.io/bitnamisecure/kubectl:latest"
	RefCoreDNS               = "registry.k8s.io/coredns/coredns:" + coreDNSVersion

	RefPristineControllerManager = "docker.io/karmada/karmada-controller-manager:v1.18.2"
	RefPristineSearch            = "docker.io/karmada/karmada-search:v1.18.2"
	RefPristineMetricsAdapter    = "docker.io/karmada/karmada-metrics-adapter:v1.18.2"
	// RefPristineWorkerOperator is upstream's Makefile IMG repository
	// (docker.io/aveshasystems/worker-operator) with the pin's tag. The
	// worker chart renders it with image.registry=docker.io,
	// image.repository=aveshasystems/worker-operator, image.tag=v1.6.4.
	RefPristineWorkerOperator = "docker.io/aveshasystems/worker-operator:v1.6.4"
)

// Catalogue is every image Build makes, in build order.
var Catalogue = []Entry{
	{RefEtcd, Unshipped,
		"etcd v3.6.6 from the tool cache (go.etcd.io/etcd/server/v3) at /usr/local/bin/etcd",
		"no etcdctl, etcdutl or migrate; the chart runs /usr/local/bin/etcd only"},
	{RefKubeAPIServer, Unshipped,
		"kube-apiserver v1.35.3 from the tool cache (k8s.io/kubernetes wrapper) at /usr/local/bin/kube-apiserver",
		"v1.35.3 under the chart's v1.35.2 tag (the tool cache's Kubernetes, one patch release newer); no go-runner entrypoint, the chart gives `command: [kube-apiserver, ...]`"},
	{RefKubeControllerManager, Unshipped,
		"kube-controller-manager v1.35.3 from the same wrapper module (toolcache.KubeAPIServer, one build with kube-apiserver) at /usr/local/bin/kube-controller-manager",
		"as kube-apiserver"},
	{RefAggregatedAPIServer, Unshipped,
		"karmada-aggregated-apiserver from the pristine v1.18.2 tree (internal/pipeline/treebin) at /bin/karmada-aggregated-apiserver, Karmada's image layout (image.Specs[\"karmada\"])",
		"holdfast's root filesystem instead of alpine: no /bin/sh or apk"},
	{RefScheduler, Unshipped, "karmada-scheduler, as the aggregated apiserver", "as the aggregated apiserver"},
	{RefWebhook, Unshipped, "karmada-webhook, as the aggregated apiserver", "as the aggregated apiserver"},
	{RefCfssl, Unshipped,
		"busybox-static (Debian, apt-get download) for sh, mkdir, cp, base64, tr, sed, sleep; bash-static as /bin/bash; cfssl and cfssljson " + cfsslVersion + " from their module; `openssl req -x509 -new` and `curl --connect-timeout` from internal/harness/standin/hooktools",
		"only the commands the chart's scripts run; openssl and curl implement exactly the chart's command lines (curl connects and sends no request); runs as root, WORKDIR /workdir, entrypoint cfssl, as upstream's"},
	{RefKubectl, Unshipped,
		"busybox-static for sh, sed, sleep; bash-static as /bin/bash; kubectl v1.35.3 from the tool cache's wrapper at /opt/bitnami/kubectl/bin/kubectl",
		"user 1001 and a group-writable /.kube as bitnami's image; `latest` there moves, the stand-in is v1.35.3"},
	{RefCoreDNS, Unshipped,
		"coredns " + coreDNSVersion + " from its module (kubeadm v1.35's CoreDNS) with the plugins the node's Corefile uses (" + strings.Join(CoreDNSPlugins, ", ") + ") at /coredns, entrypoint /coredns, user 65532",
		"no cap_net_bind_service file capability (the layer writer sets no xattrs): listen on a port above 1023 (Corefile `.:1053`) behind a Service on 53, or run it as root"},
	{RefPristineControllerManager, Pristine,
		"karmada-controller-manager from the pristine v1.18.2 tree, Karmada's image layout",
		"holdfast's root filesystem instead of alpine"},
	{RefPristineSearch, Pristine, "karmada-search, as the controller-manager", "as the controller-manager"},
	{RefPristineMetricsAdapter, Pristine, "karmada-metrics-adapter, as the controller-manager", "as the controller-manager"},
	{RefPristineWorkerOperator, Pristine,
		"worker-operator from the pristine v1.6.4 tree at /manager with files/ and scripts/, user 65532:65532, entrypoint /manager (upstream's Dockerfile, image.Specs[\"workeroperator\"])",
		"holdfast's root filesystem instead of distroless static (the same accounts)"},
}

// Refs are the catalogue's names.
func Refs() []string {
	refs := make([]string, len(Catalogue))
	for i, e := range Catalogue {
		refs[i] = e.Ref
	}
	return refs
}
