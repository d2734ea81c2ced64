package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/logtail"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// Options describes the node to start.
type Options struct {
	// Root is the holdfast repository: the tool cache's binaries and the
	// pause program's source.
	Root string
	// Name is the Node's name; default "holdfast-node".
	Name string
	// StartTimeout bounds Start from taking the machine lock to the Node
	// Ready; default 5 minutes (the first start on a loaded machine imports
	// the pause image and waits for the Node Ready). Building the tools and
	// waiting for the lock are bounded by Start's ctx alone.
	StartTimeout time.Duration
	// Logf reports progress; default discards.
	Logf func(format string, args ...any)
}

const defaultStartTimeout = 5 * time.Minute

// Node is a running single-node cluster. Its methods are safe for
// concurrent use.
type Node struct {
	opts    Options
	net     network
	layout  runLayout
	cgroup  string
	cluster *controlplane.Cluster
	bins    binaries
	unlock  func()

	holder, containerd, kubelet, kubeProxy, kcm, scheduler *controlplane.Process

	mu      sync.Mutex
	stopped bool
	timings Timings
}

// Timings are measured durations of the node's life, for the report.
type Timings struct {
	// Start is Start from taking the machine lock to the Node being Ready.
	Start time.Duration
	// Stop is Stop, clean-up included.
	Stop time.Duration
}

type binaries struct {
	etcd, apiServer, kcm, scheduler, kubelet, kubeProxy, helm string
}

// Available says why a node cannot run here, or nil: it needs root and the
// runtime hack/node-deps.sh installs.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("the node harness needs root (network and mount namespaces, cgroups)")
	}
	for _, p := range []string{"/usr/bin/containerd", "/usr/bin/ctr", "/usr/sbin/runc", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the node runtime is missing %s: run hack/node-deps.sh", p)
		}
	}
	for _, p := range []string{"ip", "iptables", "iptables-save", "ip6tables-save", "nsenter", "unshare", "mount"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("the node harness needs %s on PATH: %w", p, err)
		}
	}
	return nil
}

// Start starts the node: the control plane on the host end of the node's
// veth, kube-controller-manager and kube-scheduler beside it, and
// containerd, kubelet and kube-proxy inside the node's namespaces. It
// returns once the Node is Ready. On error nothing is left running.
func Start(ctx context.Context, o Options) (n *Node, err error) {
	begin := time.Now()
	if o.Name == "" {
		o.Name = "holdfast-node"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := Available(); err != nil {
		return nil, err
	}
	n = &Node{opts: o}
	// The tool builds and the wait for another node are bounded by the
	// caller's ctx, not StartTimeout: on a cold cache kube-apiserver with
	// kubelet, kube-controller-manager, kube-scheduler and kube-proxy is one
	// build of more than 5 minutes on 2 cores (a cold make test's node suite
	// failed with "go build: context deadline exceeded" after 300 s).
	if n.bins, err = ensureTools(ctx, o.Root); err != nil {
		return nil, err
	}
	if n.unlock, err = lockMachine(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	// Timings.Start leaves out the wait for another node to finish.
	begin = time.Now()
	if err := clearStale(o.Logf); err != nil {
		n.unlock()
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	if err := n.prepare(); err != nil {
		return n, err
	}
	if err := n.startNetwork(ctx); err != nil {
		return n, err
	}
	if err := n.startControlPlane(ctx); err != nil {
		return n, err
	}
	if err := n.startHolder(ctx); err != nil {
		return n, err
	}
	if err := n.startContainerd(ctx); err != nil {
		return n, err
	}
	if err := n.importPause(ctx); err != nil {
		return n, err
	}
	if err := n.startKubelet(ctx); err != nil {
		return n, err
	}
	if err := n.startKubeProxy(ctx); err != nil {
		return n, err
	}
	if err := n.waitNodeReady(ctx); err != nil {
		return n, err
	}
	n.timings.Start = time.Since(begin)
	o.Logf("node %s ready in %s (run %s, host %s, node %s)", o.Name, n.timings.Start.Round(time.Millisecond), n.net.id, n.net.hostIP(), n.net.nodeIP())
	return n, nil
}

// ensureTools is ensureBinaries; a test replaces it to see the context Start
// builds the tools with.
var ensureTools = ensureBinaries

func ensureBinaries(ctx context.Context, root string) (binaries, error) {
	var b binaries
	var err error
	if b.etcd, err = toolcache.Ensure(ctx, root, toolcache.Etcd); err != nil {
		return b, err
	}
	if b.apiServer, err = toolcache.Ensure(ctx, root, toolcache.KubeAPIServer); err != nil {
		return b, err
	}
	k := toolcache.KubeAPIServer
	b.kcm = k.PathOf(root, toolcache.KubeControllerManager)
	b.scheduler = k.PathOf(root, toolcache.KubeScheduler)
	b.kubelet = k.PathOf(root, toolcache.Kubelet)
	b.kubeProxy = k.PathOf(root, toolcache.KubeProxy)
	if b.helm, err = toolcache.Ensure(ctx, root, toolcache.Helm); err != nil {
		return b, err
	}
	return b, nil
}

// runMarker is in the name of every run folder, so a stale run's processes
// are found by their command lines (clearStale) even without its state.
const runMarker = "holdfast-node-run-"

// prepare chooses the run's id, addresses and folders and records them in
// the machine state (state.go) before anything is created, so a run killed
// at any point is cleared by the next.
func (n *Node) prepare() error {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	id := hex.EncodeToString(b[:])
	n.net = network{k: int(b[0]), id: id}
	if err := n.net.insidePrefix(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", runMarker+id+"-")
	if err != nil {
		return fmt.Errorf("node %s: %w", n.opts.Name, err)
	}
	n.layout = runLayout(dir)
	n.cgroup = "/holdfast-node-" + id
	if err := writeState(state{RunDir: dir, NetNS: n.net.netns(), HostVeth: n.net.hostVeth(), CgroupRoot: n.cgroup}); err != nil {
		return err
	}
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet", "kube-proxy", "logs", "bin", "runc", "pod-logs", "volume-plugins", "sysctl", "private"} {
		if err := os.MkdirAll(n.layout.path(d), 0o755); err != nil {
			return fmt.Errorf("node %s: %w", n.opts.Name, err)
		}
	}
	if err := os.WriteFile(n.layout.path("resolv.conf"), []byte(resolvConf), 0o644); err != nil {
		return err
	}
	if err := createCgroupRoot(n.cgroup); err != nil {
		return fmt.Errorf("node %s: %w", n.opts.Name, err)
	}
	return buildPause(n.opts.Root, n.layout.pause())
}

// startNetwork creates the node's network namespace and the veth pair:
// the host end holds hostIP (the API servers listen there), the node end
// nodeIP. The namespace has no default route, so nothing from the node
// leaves the machine; the host routes the pod range to the node end so
// that pods are reachable from the API servers (webhooks, replies).
func (n *Node) startNetwork(ctx context.Context) error {
	nn := n.net
	ns := nn.netns()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", nn.hostVeth(), "type", "veth", "peer", "name", nn.nodeVeth(), "netns", ns},
		{"ip", "addr", "add", nn.hostIP().String() + "/30", "dev", nn.hostVeth()},
		{"ip", "link", "set", nn.hostVeth(), "up"},
		{"ip", "-n", ns, "addr", "add", nn.nodeIP().String() + "/30", "dev", nn.nodeVeth()},
		{"ip", "-n", ns, "link", "set", nn.nodeVeth(), "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "route", "add", nn.podCIDR(), "via", nn.nodeIP().String(), "dev", nn.hostVeth()},
		// Per-namespace: pods reach the API servers through the node.
		{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	}
	for _, s := range steps {
		if err := run(ctx, s...); err != nil {
			return fmt.Errorf("node %s: network: %w", n.opts.Name, err)
		}
	}
	return nil
}

// startControlPlane starts etcd and kube-apiserver on the host end of the
// veth, then kube-controller-manager and kube-scheduler.
func (n *Node) startControlPlane(ctx context.Context) error {
	c, err := controlplane.Start(ctx, controlplane.Options{
		Name:          "node",
		Dir:           n.layout.path("controlplane"),
		Etcd:          n.bins.etcd,
		KubeAPIServer: n.bins.apiServer,
		Address:       n.net.hostIP(),
		ExtraIPSANs:   []net.IP{n.net.kubernetesServiceIP()},
		// Pods get their ServiceAccount token volume, as in any cluster.
		ServiceAccountAdmission: true,
		ExtraAPIServerFlags: []string{
			"--service-cluster-ip-range=" + n.net.serviceCIDR(),
			// Pods find the API server through the "kubernetes" Service:
			// its endpoints must be kept.
			"--endpoint-reconciler-type=lease",
			"--kubelet-preferred-address-types=InternalIP",
			"--allow-privileged=true",
		},
	})
	if err != nil {
		return err
	}
	n.cluster = c
	if err := n.writeKubeconfig(); err != nil {
		return err
	}
	kcmPort, schedPort, err := twoPorts()
	if err != nil {
		return err
	}
	cert := func(name string) string { return filepath.Join(c.Dir(), "certs", name) }
	n.kcm, err = n.startHost(ctx, "kube-controller-manager", n.bins.kcm,
		"--kubeconfig="+n.layout.kubeconfig(),
		"--authentication-kubeconfig="+n.layout.kubeconfig(),
		"--authorization-kubeconfig="+n.layout.kubeconfig(),
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(kcmPort),
		"--leader-elect=false",
		// Each controller with its own ServiceAccount, as in a real
		// cluster; with the admin's credentials the node keeps its
		// not-ready taint and every pod stays Pending.
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+cert("sa.key"),
		"--root-ca-file="+cert("ca.crt"),
		"--cluster-name="+n.opts.Name,
		"--allocate-node-cidrs=false",
		"--concurrent-deployment-syncs=2",
	)
	if err != nil {
		return err
	}
	n.scheduler, err = n.startHost(ctx, "kube-scheduler", n.bins.scheduler,
		"--kubeconfig="+n.layout.kubeconfig(),
		"--authentication-kubeconfig="+n.layout.kubeconfig(),
		"--authorization-kubeconfig="+n.layout.kubeconfig(),
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort),
		"--leader-elect=false",
	)
	return err
}

func twoPorts() (int, int, error) {
	a, err := controlplane.FreePort()
	if err != nil {
		return 0, 0, err
	}
	b, err := controlplane.FreePort()
	if err != nil {
		return 0, 0, err
	}
	if a == b {
		return twoPorts()
	}
	return a, b, nil
}

// writeKubeconfig writes the admin kubeconfig kubelet, kube-proxy and the
// controllers use: the admin's token, the API server on the host address.
func (n *Node) writeKubeconfig() error {
	cfg, err := clientcmd.LoadFromFile(n.cluster.AdminKubeconfig())
	if err != nil {
		return fmt.Errorf("node %s: %w", n.opts.Name, err)
	}
	return clientcmd.WriteToFile(*cfg, n.layout.kubeconfig())
}

func (n *Node) startHost(ctx context.Context, name, path string, args ...string) (*controlplane.Process, error) {
	p, err := controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
		Name:    name + " (" + n.opts.Name + ")",
		Path:    path,
		Args:    args,
		LogFile: filepath.Join(n.layout.logs(), name+".log"),
	})
	if err != nil {
		return nil, err
	}
	select {
	case <-p.Done():
		return nil, fmt.Errorf("node %s: %s exited at start:\n%s", n.opts.Name, name, logtail.Last(p.LogFile(), 20))
	case <-time.After(500 * time.Millisecond):
	}
	return p, ctx.Err()
}

// startHolder starts the process that holds the node's namespaces: it is
// in the node's network namespace and in a private mount namespace, where
// the host folders and sysctl files kubelet and containerd would write are
// replaced by the run's copies. Every node process enters both with
// nsenter; when the holder and they are gone, so are the mounts.
func (n *Node) startHolder(ctx context.Context) error {
	p, err := controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
		Name: "namespace holder (" + n.opts.Name + ")",
		Path: "/usr/bin/env",
		// nsenter, not `ip netns exec`: the latter mounts a fresh /sys,
		// which hides the cgroup hierarchies kubelet needs. unshare makes
		// a private mount namespace, so no mount made in it propagates
		// to the host.
		Args:    []string{"nsenter", "--net=/run/netns/" + n.net.netns(), "--", "unshare", "-m", "--propagation", "private", "--", n.layout.pause(), "holdfast-node-holder", string(n.layout)},
		LogFile: filepath.Join(n.layout.logs(), "holder.log"),
	})
	if err != nil {
		return err
	}
	n.holder = p
	// The holder is ready once it runs the pause program in the new
	// namespaces.
	deadline := time.Now().Add(30 * time.Second)
	for {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.Pid()))
		if exe == n.layout.pause() {
			break
		}
		if p.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("node %s: the namespace holder did not start:\n%s", n.opts.Name, logtail.Last(p.LogFile(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, dir := range privateDirs {
		private := n.layout.path("private", strings.ReplaceAll(strings.TrimPrefix(dir, "/"), "/", "_"))
		if err := os.MkdirAll(private, 0o755); err != nil {
			return err
		}
		if err := ensureHostDir(dir); err != nil {
			return err
		}
		if err := n.inMountNS(ctx, "mount", "--bind", private, dir); err != nil {
			return fmt.Errorf("node %s: private %s: %w", n.opts.Name, dir, err)
		}
	}
	for _, s := range kubeletSysctls {
		host := "/proc/sys/" + s
		value, err := os.ReadFile(host)
		if err != nil {
			return fmt.Errorf("node %s: reading %s: %w", n.opts.Name, host, err)
		}
		copyPath := n.layout.path("sysctl", strings.ReplaceAll(s, "/", "."))
		if err := os.WriteFile(copyPath, value, 0o644); err != nil {
			return err
		}
		if err := n.inMountNS(ctx, "mount", "--bind", copyPath, host); err != nil {
			return fmt.Errorf("node %s: sysctl %s: %w", n.opts.Name, s, err)
		}
	}
	return nil
}

// ensureHostDir creates a missing mount point on the host and records it,
// so Stop removes it again.
func ensureHostDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return updateState(func(s *state) { s.CreatedDirs = append(s.CreatedDirs, dir) })
}

// nsenterArgs enters the holder's mount and network namespaces.
func (n *Node) nsenterArgs(argv ...string) []string {
	return append([]string{"nsenter", "-t", strconv.Itoa(n.holder.Pid()), "-m", "-n", "--"}, argv...)
}

// inMountNS runs a command in the node's namespaces and waits for it.
func (n *Node) inMountNS(ctx context.Context, argv ...string) error {
	return run(ctx, n.nsenterArgs(argv...)...)
}

// InNode runs argv in the node's network and mount namespaces and returns
// its combined output: what a test checks from the node's side.
func (n *Node) InNode(ctx context.Context, argv ...string) ([]byte, error) {
	args := n.nsenterArgs(argv...)
	return exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
}

func (n *Node) startInNode(name string, argv ...string) (*controlplane.Process, error) {
	args := n.nsenterArgs(argv...)
	return controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
		Name:    name + " (" + n.opts.Name + ")",
		Path:    "/usr/bin/" + args[0],
		Args:    args[1:],
		LogFile: filepath.Join(n.layout.logs(), name+".log"),
	})
}

func (n *Node) startContainerd(ctx context.Context) error {
	if err := os.WriteFile(n.layout.containerdConfig(), []byte(containerdConfig(n.layout, pauseImage)), 0o644); err != nil {
		return err
	}
	conf, err := cniConfig(n.net, n.layout)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.layout.cniConfDir(), "10-holdfast.conflist"), conf, 0o644); err != nil {
		return err
	}
	if n.containerd, err = n.startInNode("containerd", "/usr/bin/containerd", "--config", n.layout.containerdConfig()); err != nil {
		return err
	}
	return n.wait(ctx, "containerd", n.containerd, func() bool {
		return exec.CommandContext(ctx, "ctr", "-a", n.layout.containerdSocket(), "version").Run() == nil
	})
}

func (n *Node) startKubelet(ctx context.Context) error {
	api, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	healthz, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	if err := os.WriteFile(n.layout.kubeletConfig(), []byte(kubeletConfig(n.net, n.layout, n.cgroup, kubeletPorts{api, healthz})), 0o644); err != nil {
		return err
	}
	n.kubelet, err = n.startInNode("kubelet", n.bins.kubelet,
		"--config="+n.layout.kubeletConfig(),
		"--kubeconfig="+n.layout.kubeconfig(),
		"--root-dir="+n.layout.path("kubelet", "root"),
		"--cert-dir="+n.layout.path("kubelet", "pki"),
		"--node-ip="+n.net.nodeIP().String(),
		"--hostname-override="+n.opts.Name,
		"--v=1",
	)
	if err != nil {
		return err
	}
	return n.wait(ctx, "kubelet", n.kubelet, func() bool {
		_, err := n.cluster.Kubernetes().CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		return err == nil
	})
}

func (n *Node) startKubeProxy(ctx context.Context) error {
	healthz, metrics, err := twoPorts()
	if err != nil {
		return err
	}
	if err := os.WriteFile(n.layout.kubeProxyConfig(), []byte(kubeProxyConfig(n.net, n.layout, n.opts.Name, healthz, metrics)), 0o644); err != nil {
		return err
	}
	n.kubeProxy, err = n.startInNode("kube-proxy", n.bins.kubeProxy, "--config="+n.layout.kubeProxyConfig())
	if err != nil {
		return err
	}
	return n.wait(ctx, "kube-proxy", n.kubeProxy, func() bool {
		out, err := n.InNode(ctx, "iptables-save", "-t", "nat")
		return err == nil && strings.Contains(string(out), "KUBE-SERVICES")
	})
}

// waitNodeReady waits for the Node's Ready condition: containerd's CNI is
// configured and kube-controller-manager took the not-ready taint off.
func (n *Node) waitNodeReady(ctx context.Context) error {
	return n.wait(ctx, "Node Ready", n.kubelet, func() bool {
		node, err := n.cluster.Kubernetes().CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, t := range node.Spec.Taints {
			if t.Key == "node.kubernetes.io/not-ready" {
				return false
			}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	})
}

// wait polls ready until it holds, p exits or ctx ends.
func (n *Node) wait(ctx context.Context, what string, p *controlplane.Process, ready func() bool) error {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if ready() {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("node %s: %s: %s exited:\n%s", n.opts.Name, what, p.Name(), logtail.Last(p.LogFile(), 30))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s: waiting for %s: %w; last lines of %s:\n%s", n.opts.Name, what, context.Cause(ctx), p.LogFile(), logtail.Last(p.LogFile(), 30))
		case <-t.C:
		}
	}
}

// run runs a command, naming it and its output in the error.
func run(ctx context.Context, argv ...string) error {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Name is the Node's name.
func (n *Node) Name() string { return n.opts.Name }

// Cluster is the node's control plane.
func (n *Node) Cluster() *controlplane.Cluster { return n.cluster }

// Kubernetes is the admin's typed client of the node's control plane.
func (n *Node) Kubernetes() kubernetes.Interface { return n.cluster.Kubernetes() }

// HostIP is the host end of the node's veth: where API servers a pod must
// reach listen (controlplane.Options.Address).
func (n *Node) HostIP() net.IP { return n.net.hostIP() }

// NodeIP is the node end of the veth, the Node's InternalIP.
func (n *Node) NodeIP() net.IP { return n.net.nodeIP() }

// PodCIDR is the range pod addresses come from.
func (n *Node) PodCIDR() string { return n.net.podCIDR() }

// Kubeconfig is the admin kubeconfig of the node's control plane.
func (n *Node) Kubeconfig() string { return n.layout.kubeconfig() }

// LogDir holds the node's process logs (containerd, kubelet, kube-proxy,
// kube-controller-manager, kube-scheduler).
func (n *Node) LogDir() string { return n.layout.logs() }

// Timings returns the measured start and stop durations.
func (n *Node) Timings() Timings {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.timings
}

// Helm runs the tool cache's helm against the node's control plane, with
// its own cache and config folders under the run, and returns its combined
// output.
func (n *Node) Helm(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, n.bins.helm, args...)
	home := n.layout.path("helm")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"KUBECONFIG=" + n.layout.kubeconfig(),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("helm %s on node %s: %w: %s", strings.Join(args, " "), n.opts.Name, err, logtail.Lines(string(out), 20))
	}
	return out, nil
}
