// Package node runs a real Kubernetes node on the test machine, for the
// suites that install holdfast's charts as users do and watch the pods
// (e2e/node): kube-apiserver and etcd (internal/harness/controlplane),
// kube-controller-manager and kube-scheduler on the host; containerd, runc,
// kubelet and kube-proxy (iptables mode) as the node. The Kubernetes
// binaries come from internal/toolcache (one build with kube-apiserver);
// containerd, runc, the CNI plugins and iptables are the distribution's
// (hack/node-deps.sh).
//
// Everything the node does is kept off the host, because the machine is
// shared and a test must leave it as it found it. Each step has its reason:
//
//   - Network namespace, no default route. The node and its pods live in a
//     namespace the harness creates and reach the host only over a veth pair
//     it addresses (198.18.0.0/15, RFC 2544's benchmarking range, per-run
//     subnets). A packet to any other address has no route and fails at
//     once, so nothing a pod dials (a Service before kube-proxy's rules
//     exist, a DNS server) ever leaves the machine. kube-proxy's and
//     kubelet's iptables chains, the CNI bridge and the pods' namespaces
//     are inside it and go with it. API servers a pod must reach listen on
//     the host end of the veth (Node.HostIP), not on 0.0.0.0.
//   - Private mount namespace (unshare --propagation private). kubelet,
//     containerd and the CNI plugins write /var/log/containers,
//     /var/log/pods, /run/netns, /run/containerd and /var/lib/cni whatever
//     their configuration says, and the Karmada chart's etcd hostPath is
//     under /var/lib/karmada-system; each is a bind-mounted private copy. The
//     host-wide sysctls kubelet writes (vm.overcommit_memory,
//     vm.panic_on_oom, kernel.panic, kernel.panic_on_oops,
//     kernel.keys.root_max*) are bind-mounted files, so the host keeps its
//     values.
//   - Own sockets, state and root folders, ports, bridge and interface
//     names, and a cgroupRoot per run: clean-up is one folder tree per
//     cgroup hierarchy. The cgroupRoot weighs as much CPU as eight busy
//     host processes (podsCPUWeight), as a node's pods have cores of their
//     own: at one process's weight, the other suites starved them.
//   - One node per machine (a lock under /run/holdfast-node), and a state
//     file written before anything is created, so that the next start
//     clears what a killed run left (its containerd would otherwise hold
//     its database, its shims and pods would keep running).
//
// Images are imported into containerd from the OCI layouts `holdfast images
// build` writes, under the names the charts render and by digest
// (ImportLayout). The sandbox image is holdfast's own pause program
// (./pause), as nothing can be pulled.
//
// Known to work with Debian 12's containerd 1.6.20 and runc 1.1.5 on
// cgroup v1 (kubelet's failCgroupV1: false); containerd's
// restrict_oom_score_adj is required where the sandbox lacks
// CAP_SYS_RESOURCE. See DESIGN.md, "Running a real node here".
package node
