//go:build e2e

package worker

import (
	"context"
	"errors"
	"fmt"
	"github.com/holdfast-dist/holdfast/internal/harness/hubcrds"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// Names the hubs and the worker cluster share, as a KubeSlice installation
// would have them.
const (
	clusterName = "worker-1"
	// projectNamespace is HUB_PROJECT_NAMESPACE: KubeSlice names a project's
	// namespace on the hub kubeslice-<project>.
	projectNamespace = "kubeslice-acme"
	// podNamespace is where the worker runs on the worker cluster; v1.6.4
	// writes its events there (controllers.ControlPlaneNamespace).
	podNamespace = "kubeslice-system"
	// workerSA is the worker's ServiceAccount: on each hub the identity the
	// hub minted the worker's token for, on the worker cluster its own.
	workerSA = "kubeslice-worker"
	nodeName = "worker-1-node-1"
	// nodeIP is the worker Node's ExternalIP, from RFC 5737's TEST-NET-1: it
	// is only ever data (the worker copies it to status.nodeIPs of its
	// Cluster on the hub it is connected to), never an address dialled.
	nodeIP = "192.0.2.10"
	// tokenTTL outlives any run: token expiry is not under test here.
	tokenTTL = 2 * time.Hour
	// workerAgent starts the worker's user agent (client-go's default is
	// the binary's name), which is how a hub's audit log tells the worker's
	// requests from the test's.
	workerAgent = "worker-operator"
)

// bound is how long a wait for something that normally takes a few seconds
// may last before it counts as hung. Generous: two cores are shared with
// builds and the other suites.
const bound = 2 * time.Minute

// hub is one hub cluster and the worker's credential for it.
type hub struct {
	// name is the hub's identity in claims ("hub-a").
	name string
	// slot is the worker's label for it in metrics ("primary", "secondary").
	slot     string
	cp       *controlplane.Cluster
	auditLog string
	access   hubAccess
}

// environment is the clusters every scenario of the package shares: two hubs
// and one worker cluster, started once and stopped by TestMain.
type environment struct {
	root, dir string
	binary    workerBinary
	hubA      *hub
	hubB      *hub
	worker    *controlplane.Cluster
	// workerKubeconfig is the worker's own credential on the worker
	// cluster: a kubeconfig whose user reads workerSA's token from a file.
	workerKubeconfig string

	mu       sync.Mutex // guards versions
	versions map[string]string
}

var shared struct {
	once sync.Once
	env  *environment
	err  error
}

// sharedEnvironment starts the clusters on first use, so that running only
// the unit tests (go test -tags e2e -run TestParse) starts nothing.
func sharedEnvironment() (*environment, error) {
	shared.once.Do(func() {
		root, err := toolcache.Root()
		if err != nil {
			shared.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold kube-apiserver build is ~7 min on 2 cores
		defer cancel()
		shared.env, shared.err = newEnvironment(ctx, root)
	})
	return shared.env, shared.err
}

func newEnvironment(ctx context.Context, root string) (env *environment, err error) {
	bin, err := findWorkerBinary(root, false)
	if err != nil {
		return nil, err
	}
	etcd, kas, err := controlplane.EnsureBinaries(ctx, root)
	if err != nil {
		return nil, err
	}
	apisDir, err := hubcrds.ModuleDir(ctx, hubcrds.APIsModule, hubcrds.APIsVersion)
	if err != nil {
		return nil, err
	}
	hubCRDs, err := hubcrds.ReadCRDs(filepath.Join(apisDir, "crd"))
	if err != nil {
		return nil, err
	}
	operatorDir, err := hubcrds.ModuleDir(ctx, hubcrds.WorkerOperatorModule, bin.Version)
	if err != nil {
		return nil, err
	}
	workerCRDs, err := hubcrds.ReadCRDs(filepath.Join(operatorDir, "config", "crd", "bases"))
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "holdfast-e2e-worker-")
	if err != nil {
		return nil, err
	}
	env = &environment{root: root, dir: dir, binary: bin, versions: map[string]string{
		"etcd":                                  toolcache.Etcd.Version,
		"kube-apiserver":                        toolcache.KubeAPIServer.Version,
		"hub CRDs (" + hubcrds.APIsModule + ")": hubcrds.APIsVersion,
		"worker CRDs (" + hubcrds.WorkerOperatorModule + ")": bin.Version,
	}}
	defer func() {
		if err != nil {
			env.stop(true)
			env = nil
		}
	}()
	// Logs kept by an earlier failed run would read as this run's.
	if err := os.RemoveAll(env.keptLogs()); err != nil {
		return env, err
	}
	for _, d := range []string{"logs", "credentials"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}

	env.hubA = &hub{name: "hub-a", slot: "primary"}
	env.hubB = &hub{name: "hub-b", slot: "secondary"}
	// The three control planes start concurrently: each is mostly waiting
	// for its etcd and its API server's readyz.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, h := range []*hub{env.hubA, env.hubB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = env.startHub(ctx, h, etcd, kas, hubCRDs)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[2] = env.startWorkerCluster(ctx, etcd, kas, workerCRDs)
	}()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return env, err
	}
	return env, nil
}

// startHub starts a hub with audit logging, the KubeSlice hub CRDs, the
// project namespace, the worker's Cluster, and a ServiceAccount the worker
// authenticates as.
func (e *environment) startHub(ctx context.Context, h *hub, etcd, kas string, crds []byte) error {
	hubDir := filepath.Join(e.dir, h.name)
	if err := os.MkdirAll(hubDir, 0o700); err != nil {
		return err
	}
	audit, auditLog, err := auditFlags(hubDir)
	if err != nil {
		return err
	}
	h.auditLog = auditLog
	h.cp, err = controlplane.Start(ctx, controlplane.Options{
		Name: h.name, Dir: hubDir, Etcd: etcd, KubeAPIServer: kas, ExtraAPIServerFlags: audit,
	})
	if err != nil {
		return fmt.Errorf("starting hub %s: %w", h.name, err)
	}
	if err := h.cp.ApplyYAML(ctx, crds); err != nil {
		return fmt.Errorf("hub %s: installing the KubeSlice CRDs: %w", h.name, err)
	}
	// spec.clusterProperty.monitoring.kubernetesDashboard.enabled is what
	// the worker sets after its first registration; set here, the worker
	// skips copying a dashboard ServiceAccount's Secret that nothing here
	// creates (it would retry that, with backoff, forever).
	cluster := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: controller.kubeslice.io/v1alpha1
kind: Cluster
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  clusterProperty:
    monitoring:
      kubernetesDashboard: {enabled: true}
`, projectNamespace, clusterName)
	if err := h.cp.ApplyYAML(ctx, []byte(cluster)); err != nil {
		return fmt.Errorf("hub %s: creating the worker's Cluster: %w", h.name, err)
	}
	// cluster-admin stands in for the RBAC the KubeSlice controller grants
	// a worker in its project namespace: authorization is not under test.
	if err := h.cp.BindClusterAdmin(ctx, projectNamespace, workerSA); err != nil {
		return fmt.Errorf("hub %s: %w", h.name, err)
	}
	h.access = hubAccess{
		Endpoint:  h.cp.Endpoint(),
		TokenFile: filepath.Join(e.dir, "credentials", h.name+".token"),
		CAFile:    h.cp.CAFile(),
	}
	return e.mintHubToken(ctx, h)
}

// mintHubToken writes a fresh token for the worker's ServiceAccount on h to
// the worker's token file for h.
func (e *environment) mintHubToken(ctx context.Context, h *hub) error {
	token, err := h.cp.ServiceAccountToken(ctx, projectNamespace, workerSA, tokenTTL)
	if err != nil {
		return fmt.Errorf("hub %s: minting the worker's token: %w", h.name, err)
	}
	return writeFileAtomic(h.access.TokenFile, []byte(token))
}

// startWorkerCluster starts the worker cluster with worker-operator's CRDs,
// the worker's namespace, one Node, and the worker's own ServiceAccount.
func (e *environment) startWorkerCluster(ctx context.Context, etcd, kas string, crds []byte) error {
	dir := filepath.Join(e.dir, "worker")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var err error
	e.worker, err = controlplane.Start(ctx, controlplane.Options{Name: "worker", Dir: dir, Etcd: etcd, KubeAPIServer: kas})
	if err != nil {
		return fmt.Errorf("starting the worker cluster: %w", err)
	}
	if err := e.worker.ApplyYAML(ctx, crds); err != nil {
		return fmt.Errorf("worker cluster: installing worker-operator's CRDs: %w", err)
	}
	if err := e.worker.ApplyYAML(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+podNamespace+"}\n")); err != nil {
		return fmt.Errorf("worker cluster: %w", err)
	}
	if err := createNode(ctx, e.worker); err != nil {
		return err
	}
	e.workerKubeconfig, err = e.ownCredential(ctx, workerSA)
	return err
}

// ownCredential gives the worker an identity of its own on the worker
// cluster: a cluster-admin ServiceAccount (the worker's ClusterRole is wide,
// and authorization is not under test) whose token is in a file that a
// kubeconfig names with tokenFile, as a pod's projected token is read. It
// returns the kubeconfig's path.
func (e *environment) ownCredential(ctx context.Context, sa string) (string, error) {
	if err := e.worker.BindClusterAdmin(ctx, podNamespace, sa); err != nil {
		return "", fmt.Errorf("worker cluster: %w", err)
	}
	tokenFile := e.ownTokenFile(sa)
	if err := e.mintOwnToken(ctx, sa, tokenFile); err != nil {
		return "", err
	}
	kubeconfig := filepath.Join(e.dir, "credentials", "worker-"+sa+".kubeconfig")
	if err := e.worker.WriteTokenKubeconfig(kubeconfig, tokenFile); err != nil {
		return "", fmt.Errorf("worker cluster: %w", err)
	}
	return kubeconfig, nil
}

// ownTokenFile is where the worker's own token for sa is kept.
func (e *environment) ownTokenFile(sa string) string {
	return filepath.Join(e.dir, "credentials", "worker-"+sa+".token")
}

// mintOwnToken writes a fresh token for sa on the worker cluster to
// tokenFile, replacing the file the way the kubelet updates a projected
// token: the new content appears at once, never half written.
func (e *environment) mintOwnToken(ctx context.Context, sa, tokenFile string) error {
	token, err := e.worker.ServiceAccountToken(ctx, podNamespace, sa, tokenTTL)
	if err != nil {
		return fmt.Errorf("worker cluster: minting a token for %s/%s: %w", podNamespace, sa, err)
	}
	return writeFileAtomic(tokenFile, []byte(token))
}

// createNode adds the one Node the worker's cluster reconciler needs (it
// reads node addresses and refuses an empty node list). No kubelet runs:
// the Node is data, its address written through the status subresource.
func createNode(ctx context.Context, c *controlplane.Cluster) error {
	nodes := c.Kubernetes().CoreV1().Nodes()
	node, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = nodes.Get(ctx, nodeName, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("worker cluster: creating Node %s: %w", nodeName, err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: nodeIP}}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("worker cluster: writing Node %s's address: %w", nodeName, err)
	}
	return nil
}

// keptLogs is where a failed run's logs are kept for the report's reader.
func (e *environment) keptLogs() string {
	return filepath.Join(e.root, e2ereport.Dir, "logs", "worker")
}

// stop stops every cluster; with failed, it first copies every log (the
// clusters', the hubs' audit logs, the worker processes') to
// _output/reports/e2e/logs/worker/ for the report's reader.
func (e *environment) stop(failed bool) {
	var clusters []*controlplane.Cluster
	for _, h := range []*hub{e.hubA, e.hubB} {
		if h != nil && h.cp != nil {
			clusters = append(clusters, h.cp)
		}
	}
	if e.worker != nil {
		clusters = append(clusters, e.worker)
	}
	for _, c := range clusters {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping cluster %s: %v\n", c.Name(), err)
		}
	}
	if failed {
		dst := e.keptLogs()
		if err := copyLogs(e.dir, dst); err != nil {
			fmt.Fprintf(os.Stderr, "keeping the logs: %v\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "logs kept in %s\n", dst)
		}
	}
	if err := os.RemoveAll(e.dir); err != nil {
		fmt.Fprintf(os.Stderr, "removing %s: %v\n", e.dir, err)
	}
}
