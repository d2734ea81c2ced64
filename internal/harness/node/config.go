package node

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
)

// addressPrefix is RFC 2544's benchmarking range, 198.18.0.0/15: nothing on
// or around the test machines uses it, so no address the harness invents
// can shadow a real one. 198.18.<k>.0/30 is the veth pair, 198.19.<k>.0/25
// the pods and 198.19.<k>.128/25 the Services of run k.
const addressPrefix = "198.18.0.0/15"

// network is one run's addresses and interface names.
type network struct {
	// k is the run's third octet; the names carry it too.
	k int
	// id is the run's short id, in every name the run creates.
	id string
}

func (n network) hostIP() net.IP   { return net.IPv4(198, 18, byte(n.k), 1) }
func (n network) nodeIP() net.IP   { return net.IPv4(198, 18, byte(n.k), 2) }
func (n network) vethCIDR() string { return fmt.Sprintf("198.18.%d.0/30", n.k) }
func (n network) podCIDR() string  { return fmt.Sprintf("198.19.%d.0/25", n.k) }

// serviceCIDR is the Service network; its first address is the
// "kubernetes" Service's ClusterIP (kubernetesServiceIP).
func (n network) serviceCIDR() string         { return fmt.Sprintf("198.19.%d.128/25", n.k) }
func (n network) kubernetesServiceIP() net.IP { return net.IPv4(198, 19, byte(n.k), 129) }

// dnsServiceIP is the cluster DNS Service's ClusterIP, fixed because
// kubelet writes it into every pod's resolv.conf before the Service exists
// (StartDNS creates it).
func (n network) dnsServiceIP() net.IP { return net.IPv4(198, 19, byte(n.k), 138) }

// Interface names are at most 15 bytes (IFNAMSIZ); "hf" marks them as the
// harness's for anyone reading `ip link`.
func (n network) netns() string    { return "holdfast-node-" + n.id }
func (n network) hostVeth() string { return "hfh" + n.id }
func (n network) nodeVeth() string { return "hfn" + n.id }
func (n network) bridge() string   { return "hfb" + n.id }

// runLayout is where a run keeps its files. Every path is absolute: the
// node's processes start through nsenter, in "/".
type runLayout string

func (l runLayout) path(elem ...string) string {
	return filepath.Join(append([]string{string(l)}, elem...)...)
}
func (l runLayout) containerdConfig() string { return l.path("containerd", "config.toml") }
func (l runLayout) containerdSocket() string { return l.path("containerd", "containerd.sock") }
func (l runLayout) cniConfDir() string       { return l.path("cni", "net.d") }
func (l runLayout) kubeletConfig() string    { return l.path("kubelet", "config.yaml") }
func (l runLayout) kubeProxyConfig() string  { return l.path("kube-proxy", "config.yaml") }
func (l runLayout) logs() string             { return l.path("logs") }
func (l runLayout) pause() string            { return l.path("bin", "pause") }
func (l runLayout) kubeconfig() string       { return l.path("node.kubeconfig") }

// privateDirs are the host folders kubelet, containerd and the CNI plugins
// write whatever their configuration says (log links, netns mounts, shim
// sockets, CNI result cache). Each gets a private copy under the run folder,
// bind-mounted over it in the node's mount namespace only.
// /var/lib/karmada-system is the Karmada chart's etcd hostPath
// (etcd.internal.storageType: hostPath by default): without it kubelet
// would create it on the host and a later run's etcd would find this run's
// data there.
var privateDirs = []string{"/var/log/containers", "/var/log/pods", "/run/netns", "/run/containerd", "/var/lib/cni", "/var/lib/karmada-system"}

// kubeletSysctls are the host-wide /proc/sys files kubelet writes at start
// (its "protect kernel defaults" settings and key quotas). Inside the
// node's mount namespace each is a bind-mounted copy, so the host keeps its
// values; the host-left-as-it-was test reads them before and after.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// containerdConfig is containerd's configuration for the run: its own
// root, state and sockets, runc with its own root, the local pause image,
// and the CNI folders of the run.
func containerdConfig(l runLayout, sandboxImage string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# Snapshotters that probe the host's filesystems at start only slow it.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  # Nothing can be pulled here: the harness imports its own pause image.
  sandbox_image = %[6]q
  # The test sandbox has no CAP_SYS_RESOURCE, so runc cannot lower a
  # container's oom_score_adj below containerd's; without this every pod
  # sandbox fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[8]q
`, l.path("containerd", "root"), l.path("containerd", "state"), l.containerdSocket(), l.containerdSocket()+".ttrpc",
		l.path("containerd", "opt"), sandboxImage, l.path("runc"), l.cniConfDir())
}

// cniConfig is the pod network: a bridge with host-local addresses. No
// masquerade and no portmap, so the plugins add no iptables chains; the
// host routes the pod range to the node's veth instead.
func cniConfig(n network, l runLayout) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "holdfast-node",
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      n.bridge(),
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  [][]map[string]string{{{"subnet": n.podCIDR()}}},
				"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				"dataDir": l.path("cni", "ipam"),
			},
		}},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// kubeletPorts are kubelet's listeners: its API on the node address for
// kube-apiserver (logs, exec), its healthz on the namespace's loopback.
type kubeletPorts struct{ api, healthz int }

// kubeletConfig is kubelet's configuration file. Anonymous, always-allow
// access to its API is for kube-apiserver, which reaches it over the veth
// without a client certificate; nothing else can reach that address.
func kubeletConfig(n network, l runLayout, cgroupRoot string, p kubeletPorts) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
# Every pod cgroup under one folder per hierarchy: clean-up is one tree.
cgroupRoot: %[4]s
# kubelet 1.35 refuses cgroup v1 unless told; the test machines have it.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[5]s
podLogsDir: %[6]s
volumePluginDir: %[7]s
resolvConf: %[8]s
clusterDomain: cluster.local
# Answered once StartDNS has run; before that a lookup fails at once (the
# address has no Service, the node no default route).
clusterDNS: [%[9]s]
serializeImagePulls: false
# Images are imported, never pulled: garbage collection must not remove them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# The disk is shared with builds; default eviction thresholds would evict
# the suite's pods when it fills.
evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", nodefs.inodesFree: "1%%", imagefs.available: "1%%"}
kubeAPIQPS: 50
kubeAPIBurst: 100
`, n.nodeIP(), p.api, p.healthz, cgroupRoot, l.containerdSocket(), l.path("pod-logs"), l.path("volume-plugins"), l.path("resolv.conf"), n.dnsServiceIP())
}

// kubeProxyConfig is kube-proxy's configuration: iptables mode inside the
// node's network namespace. The conntrack settings are zero so it leaves
// nf_conntrack_max, a host-wide value, alone.
func kubeProxyConfig(n network, l runLayout, nodeName string, healthz, metrics int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
mode: iptables
hostnameOverride: %[2]s
clusterCIDR: %[3]s
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, l.kubeconfig(), nodeName, n.podCIDR(), healthz, metrics)
}

// resolvConf is the pods' resolv.conf: no name server, so a lookup fails
// at once instead of going to the host's resolvers (the network rule).
const resolvConf = "# holdfast node: no DNS\noptions ndots:1\n"

// hasPrefix reports whether every address a run uses is inside
// addressPrefix (a guard for the unit test and for Start).
func (n network) insidePrefix() error {
	_, prefix, _ := net.ParseCIDR(addressPrefix)
	for _, s := range []string{n.vethCIDR(), n.podCIDR(), n.serviceCIDR()} {
		ip, _, err := net.ParseCIDR(s)
		if err != nil || !prefix.Contains(ip) {
			return fmt.Errorf("node network %s: %s is outside %s", n.id, s, addressPrefix)
		}
	}
	if len(n.hostVeth()) > 15 || len(n.bridge()) > 15 || strings.ContainsAny(n.id, "/ ") {
		return fmt.Errorf("node network %s: interface names longer than 15 bytes", n.id)
	}
	return nil
}
