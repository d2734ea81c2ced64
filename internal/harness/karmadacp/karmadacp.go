package karmadacp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// Component names a Karmada process the harness runs; it is also the
// binary's name and its log file's (<name>.log in the API server's log
// folder).
type Component string

const (
	AggregatedAPIServer Component = "karmada-aggregated-apiserver"
	Webhook             Component = "karmada-webhook"
	Scheduler           Component = "karmada-scheduler"
	ControllerManager   Component = "karmada-controller-manager"
	Search              Component = "karmada-search"
	MetricsAdapter      Component = "karmada-metrics-adapter"
	// Agent runs beside a member joined in Pull mode (JoinPull), not in
	// the control plane: no Options field starts it.
	Agent Component = "karmada-agent"
	// SchedulerEstimator is shipped and found with the others; no scenario
	// runs it yet (the scheduler runs without estimators).
	SchedulerEstimator Component = "karmada-scheduler-estimator"
)

// Components are every component, in start order: the aggregated API
// server first (the others read Clusters through it), the webhook before
// anything creates Karmada objects (its configurations fail closed), the
// scheduler and the controller-manager last, as deploy-karmada.sh orders
// them.
var Components = []Component{AggregatedAPIServer, Webhook, Scheduler, ControllerManager}

// Running are the components o starts, in start order: Components, then
// the optional ones o enables (karmada-search after the
// controller-manager, as deploy-karmada.sh deploys it after the core
// components).
func (o Options) Running() []Component {
	cs := slices.Clone(Components)
	if o.Search {
		cs = append(cs, Search)
	}
	if o.MetricsAdapter {
		cs = append(cs, MetricsAdapter)
	}
	if o.CSRSigning {
		cs = append(cs, CSRSigner)
	}
	return cs
}

// Binaries are the paths of the component binaries, e.g. from
// internal/pipeline/treebin (aggregated API server, scheduler, webhook) and
// `holdfast build` (controller-manager).
type Binaries map[Component]string

// ClusterGVR is cluster.karmada.io/v1alpha1 clusters, served by
// karmada-aggregated-apiserver through karmada-apiserver.
var ClusterGVR = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}

// Options describe a Karmada control plane to start.
type Options struct {
	// Name names karmada-apiserver's cluster in logs and folders; a DNS
	// label. Default "karmada".
	Name string
	// Dir holds everything of the control plane; StartForTest defaults it
	// to a temporary folder.
	Dir string
	// Tree is the Karmada tree the CRDs, webhook configuration and
	// APIService are read from (the pinned tree under _output/trees).
	Tree string
	// Etcd and KubeAPIServer are internal/toolcache's binaries.
	Etcd, KubeAPIServer string
	// Binaries must name every Component, and every optional component
	// enabled.
	Binaries Binaries
	// Search also starts karmada-search, registered for
	// search.karmada.io/v1alpha1 (see startSearch). Off by default: a
	// scenario that does not search does not pay for its start.
	Search bool
	// ControllerManager are karmada-controller-manager's flags.
	ControllerManager ControllerManagerOptions
	// Verbosity is klog's -v of the other components; default
	// DefaultVerbosity.
	Verbosity int
	// StartTimeout bounds each component's start (and karmada-apiserver's);
	// default 3 minutes, for a runner busy compiling.
	StartTimeout time.Duration
	// MetricsAdapter also starts karmada-metrics-adapter, registered for
	// metrics.k8s.io and custom.metrics.k8s.io (startMetricsAdapter);
	// Binaries must then name it. Default off.
	MetricsAdapter bool
	// CSRSigning also starts CSRSigner (kube-controller-manager's
	// csrsigning controller) and makes karmada-apiserver trust client
	// certificates (--client-ca-file) of two CAs of the control plane's:
	// the signer's and the one JoinPullCertificate issues an agent's first
	// certificate from. Binaries must then name CSRSigner. Default off.
	CSRSigning bool
	// APIServerFlags are appended to karmada-apiserver's (e.g.
	// controlplane.AuditFlags, for a scenario that counts the components'
	// requests). Default none.
	APIServerFlags []string
}

const defaultStartTimeout = 3 * time.Minute

// portAttempts is how often a component is started on new ports when one
// chosen free was taken before it bound it (as internal/harness/controlplane).
const portAttempts = 3

// readyPoll is how often a starting component is probed.
const readyPoll = 200 * time.Millisecond

// ownTokenTTL outlives any run: nothing here expires the
// controller-manager's own token.
const ownTokenTTL = time.Hour

func (o *Options) complete() error {
	if o.Name == "" {
		o.Name = "karmada"
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("karmada control plane name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Dir == "" {
		return fmt.Errorf("karmada control plane %s: Options.Dir is required", o.Name)
	}
	if o.Tree == "" {
		return fmt.Errorf("karmada control plane %s: Options.Tree is required (the pinned Karmada tree)", o.Name)
	}
	if _, err := os.Stat(filepath.Join(o.Tree, crdKustomization)); err != nil {
		return fmt.Errorf("karmada control plane %s: not a Karmada tree: %w", o.Name, err)
	}
	for _, c := range o.Running() {
		path := o.Binaries[c]
		if path == "" {
			return fmt.Errorf("karmada control plane %s: no %s binary in Options.Binaries", o.Name, c)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("karmada control plane %s: %s binary: %w", o.Name, c, err)
		}
	}
	if o.Verbosity == 0 {
		o.Verbosity = DefaultVerbosity
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = defaultStartTimeout
	}
	return nil
}

func (o Options) apiServerOptions(p *pki) controlplane.Options {
	flags := frontProxyFlags(p)
	if o.CSRSigning {
		flags = append(flags, clientCAFlags(p)...)
	}
	return controlplane.Options{
		Name:                o.Name,
		Dir:                 filepath.Join(o.Dir, "apiserver"),
		Etcd:                o.Etcd,
		KubeAPIServer:       o.KubeAPIServer,
		ExtraAPIServerFlags: append(flags, o.APIServerFlags...),
		StartTimeout:        o.StartTimeout,
	}
}

// ControlPlane is a running Karmada control plane: karmada-apiserver (API)
// with its etcd, and the component processes. Its methods are safe for
// concurrent use.
type ControlPlane struct {
	// API is karmada-apiserver; its admin clients reach Karmada's API,
	// cluster.karmada.io through the aggregated API server included.
	API  *controlplane.Cluster
	opts Options
	pki  *pki

	mu      sync.Mutex
	procs   map[Component]*controlplane.Process
	urls    map[Component]string // metrics endpoints
	timings map[Component]time.Duration
	// cleanups stop what runs beside the components (a kubelet stand-in).
	cleanups []func()
	stopped  bool
}

// Start starts karmada-apiserver and every component and returns once each
// reports ready and the Cluster API answers through the aggregation layer.
// ctx bounds only the start. On error nothing is left running.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	if err := o.complete(); err != nil {
		return nil, err
	}
	p, err := o.newPKI(time.Now())
	if err != nil {
		return nil, fmt.Errorf("karmada control plane %s: certificates: %w", o.Name, err)
	}
	api, err := controlplane.Start(ctx, o.apiServerOptions(p))
	if err != nil {
		return nil, err
	}
	cp, err := startComponents(ctx, o, p, api)
	if err != nil {
		if cp != nil {
			cp.stopComponents()
		}
		_ = api.Stop()
		return nil, err
	}
	return cp, nil
}

// startComponents starts the components on a running karmada-apiserver.
// It returns the control plane even on error, so that the caller stops
// what did start.
func startComponents(ctx context.Context, o Options, p *pki, api *controlplane.Cluster) (*ControlPlane, error) {
	cp := &ControlPlane{
		API: api, opts: o, pki: p,
		procs:   map[Component]*controlplane.Process{},
		urls:    map[Component]string{},
		timings: map[Component]time.Duration{},
	}
	for _, ns := range []string{SystemNamespace, ClusterNamespace} {
		if err := ensureNamespace(ctx, api, ns); err != nil {
			return cp, err
		}
	}
	admin := api.AdminKubeconfig()
	if err := cp.startAggregated(ctx, admin); err != nil {
		return cp, err
	}
	if err := cp.startWebhook(ctx, admin); err != nil {
		return cp, err
	}
	if err := cp.startScheduler(ctx, admin); err != nil {
		return cp, err
	}
	if err := cp.startControllerManager(ctx); err != nil {
		return cp, err
	}
	if o.Search {
		if err := cp.startSearch(ctx, admin); err != nil {
			return cp, err
		}
	}
	if o.MetricsAdapter {
		if err := cp.startMetricsAdapter(ctx, admin); err != nil {
			return cp, err
		}
	}
	if o.CSRSigning {
		if err := cp.startCSRSigner(ctx, admin); err != nil {
			return cp, err
		}
	}
	return cp, nil
}

func (cp *ControlPlane) startAggregated(ctx context.Context, kubeconfig string) error {
	return cp.start(ctx, component{
		name:  AggregatedAPIServer,
		ports: 1,
		args: func(ports []int) ([]string, error) {
			return aggregatedArgs(kubeconfig, cp.API.EtcdEndpoint(), cp.pki, ports[0], cp.opts.Verbosity), nil
		},
		ready: func(ports []int) check { return cp.httpsCheck(fmt.Sprintf("https://%s/readyz", hostPort(ports[0]))) },
		after: func(ctx context.Context, ports []int) error {
			objs, err := AggregatedAPIService(cp.opts.Tree, cp.pki.caCert, ports[0])
			if err != nil {
				return err
			}
			if err := applyObjects(ctx, cp.API, objs); err != nil {
				return fmt.Errorf("registering the APIService: %w", err)
			}
			return cp.waitServed(ctx, ClusterGVR)
		},
		// Its metrics are behind authentication, and nothing here reads
		// them.
		metrics: -1,
	})
}

func (cp *ControlPlane) startWebhook(ctx context.Context, kubeconfig string) error {
	return cp.start(ctx, component{
		name:  Webhook,
		ports: 3,
		// The CRDs' conversion webhook and the webhook configurations name
		// the port, so they are applied for each port chosen, before the
		// webhook starts: it reads Karmada's CRDs, and deploy-karmada.sh
		// installs them (and the configurations) first as well.
		before: func(ctx context.Context, ports []int) error {
			crds, err := CRDs(cp.opts.Tree, cp.pki.caCert, ports[0])
			if err != nil {
				return err
			}
			if err := cp.API.ApplyYAML(ctx, crds); err != nil {
				return fmt.Errorf("installing Karmada's CRDs: %w", err)
			}
			hooks, err := WebhookConfiguration(cp.opts.Tree, cp.pki.caCert, ports[0])
			if err != nil {
				return err
			}
			if err := cp.API.ApplyYAML(ctx, hooks); err != nil {
				return fmt.Errorf("installing the webhook configurations: %w", err)
			}
			return nil
		},
		args: func(ports []int) ([]string, error) {
			return webhookArgs(kubeconfig, cp.pki, ports[0], ports[1], ports[2], cp.opts.Verbosity), nil
		},
		// The webhook serves its readiness on the TLS port, where upstream's
		// readiness probe asks.
		ready:   func(ports []int) check { return cp.httpsCheck(fmt.Sprintf("https://%s/readyz/", hostPort(ports[0]))) },
		metrics: 1,
	})
}

func (cp *ControlPlane) startScheduler(ctx context.Context, kubeconfig string) error {
	return cp.start(ctx, component{
		name:  Scheduler,
		ports: 2,
		args: func(ports []int) ([]string, error) {
			return schedulerArgs(kubeconfig, ports[0], ports[1], cp.opts.Verbosity), nil
		},
		ready:   func(ports []int) check { return httpCheck(fmt.Sprintf("http://%s/healthz", hostPort(ports[1]))) },
		metrics: 0,
	})
}

// startControllerManager runs karmada-controller-manager as a pod would:
// its own ServiceAccount in karmada-system (bound to cluster-admin, as
// upstream's chart binds it broadly) read from a token file, so that a
// scenario can revoke it.
func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	dir := filepath.Join(cp.opts.Dir, string(ControllerManager))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	name := string(ControllerManager)
	token, err := cp.API.ServiceAccountToken(ctx, SystemNamespace, name, ownTokenTTL)
	if err != nil {
		return fmt.Errorf("%s: own ServiceAccount: %w", name, err)
	}
	if err := cp.API.BindClusterAdmin(ctx, SystemNamespace, name); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.API.WriteTokenKubeconfig(kubeconfig, tokenFile); err != nil {
		return err
	}
	return cp.start(ctx, component{
		name:  ControllerManager,
		ports: 2,
		args: func(ports []int) ([]string, error) {
			return cp.opts.ControllerManager.args(kubeconfig, ports[0], ports[1])
		},
		ready:   func(ports []int) check { return httpCheck(fmt.Sprintf("http://%s/healthz", hostPort(ports[1]))) },
		metrics: 0,
	})
}

// component says how to start one process.
type component struct {
	name Component
	// ports is how many 127.0.0.1 ports to choose.
	ports int
	// before runs before each start attempt, after runs once the process
	// is ready; either may fail the start.
	before, after func(ctx context.Context, ports []int) error
	args          func(ports []int) ([]string, error)
	// env is the process's environment on top of PATH, HOME and TMPDIR.
	env   []string
	ready func(ports []int) check
	// metrics is the index of the metrics port (served at /metrics over
	// HTTP), or -1 when the component has none worth scraping.
	metrics int
}

// check probes readiness once (internal/harness/controlplane's probe).
type check = controlplane.Probe

// start chooses ports, runs before, starts the process, waits until ready
// and runs after; a port taken before the bind means another attempt on
// new ports.
func (cp *ControlPlane) start(ctx context.Context, c component) error {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cp.opts.StartTimeout)
	defer cancel()
	logFile := filepath.Join(cp.API.LogDir(), string(c.name)+".log")
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(c.ports)
		if err != nil {
			return err
		}
		if c.before != nil {
			if err := c.before(ctx, ports); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		args, err := c.args(ports)
		if err != nil {
			return err
		}
		p, err := controlplane.StartProcess(context.Background(), controlplane.ProcessOptions{
			Name:    string(c.name) + " (" + cp.opts.Name + ")",
			Path:    cp.opts.Binaries[c.name],
			Args:    args,
			Env:     c.env,
			Dir:     cp.opts.Dir,
			LogFile: logFile,
		})
		if err != nil {
			return err
		}
		cp.mu.Lock()
		cp.procs[c.name] = p
		cp.mu.Unlock()
		err = controlplane.WaitReady(ctx, cp.opts.Name, p, c.ready(ports))
		if err == nil {
			if c.metrics >= 0 && c.metrics < len(ports) {
				cp.mu.Lock()
				cp.urls[c.name] = fmt.Sprintf("http://%s/metrics", hostPort(ports[c.metrics]))
				cp.mu.Unlock()
			}
			if c.after != nil {
				if err := c.after(ctx, ports); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
			cp.mu.Lock()
			cp.timings[c.name] = time.Since(begin)
			cp.mu.Unlock()
			return nil
		}
		_ = p.Kill()
		if !errors.Is(err, controlplane.ErrAddrInUse) || attempt == portAttempts {
			return err
		}
	}
}

// freePorts returns n distinct ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		p, err := controlplane.FreePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// httpsCheck GETs url over TLS verified against the control plane's CA.
func (cp *ControlPlane) httpsCheck(url string) check {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.pki.caCert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return getCheck(client, url)
}

func httpCheck(url string) check { return getCheck(http.DefaultClient, url) }

func getCheck(client *http.Client, url string) check {
	return controlplane.HTTPProbe(client, url, nil)
}

func ensureNamespace(ctx context.Context, c *controlplane.Cluster, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{karmadaSystemLabel: "true"}}}
	_, err := c.Kubernetes().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster %s: creating namespace %s: %w", c.Name(), name, err)
	}
	return nil
}

// applyObjects server-side applies objs through ApplyYAML (which takes a
// JSON stream as well).
func applyObjects(ctx context.Context, c *controlplane.Cluster, objs []*unstructured.Unstructured) error {
	var stream []byte
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		stream = append(append(stream, data...), '\n')
	}
	return c.ApplyYAML(ctx, stream)
}

// Process returns the running process of c, nil before it started.
func (cp *ControlPlane) Process(c Component) *controlplane.Process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.procs[c]
}

// MetricsURL is the /metrics endpoint of c ("" if it has none): plain
// HTTP for the controller-runtime components; https for karmada-search,
// which needs karmada-apiserver's admin bearer token and CAData (see
// startSearch).
func (cp *ControlPlane) MetricsURL(c Component) string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.urls[c]
}

// StartTimes are how long each component took from its start to ready
// (the aggregated API server: to the Cluster API answering through
// karmada-apiserver; the webhook: including the CRDs and configurations).
func (cp *ControlPlane) StartTimes() map[Component]time.Duration {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	out := make(map[Component]time.Duration, len(cp.timings))
	for k, v := range cp.timings {
		out[k] = v
	}
	return out
}

// Restart stops component c as a rollout restart would (SIGTERM, then
// SIGKILL after stopGrace) and starts it again as Start did, on new ports,
// so that every client it holds is built afresh: the workaround operators
// use for a rotated member credential. Only the components that hold
// member clients in the control plane can be restarted
// (ControlPlaneShipped); the controller-manager gets a
// new token of its own ServiceAccount.
func (cp *ControlPlane) Restart(ctx context.Context, c Component) error {
	if !slices.Contains(cp.opts.Running(), c) {
		return fmt.Errorf("karmada control plane %s: restarting %s: not running", cp.opts.Name, c)
	}
	p := cp.Process(c)
	if p == nil {
		return fmt.Errorf("karmada control plane %s: restarting %s: never started", cp.opts.Name, c)
	}
	_ = p.Stop(stopGrace)
	admin := cp.API.AdminKubeconfig()
	var err error
	switch c {
	case ControllerManager:
		err = cp.startControllerManager(ctx)
	case Search:
		err = cp.startSearch(ctx, admin)
	case MetricsAdapter:
		err = cp.startMetricsAdapter(ctx, admin)
	default:
		return fmt.Errorf("karmada control plane %s: restarting %s: only %v can be restarted", cp.opts.Name, c, ControlPlaneShipped)
	}
	if err != nil {
		return fmt.Errorf("karmada control plane %s: restarting %s: %w", cp.opts.Name, c, err)
	}
	return nil
}

// CAData is the PEM of the CA that signed the aggregated API server's and
// the webhook's serving certificates.
func (cp *ControlPlane) CAData() []byte { return append([]byte(nil), cp.pki.caCert...) }

// RestartControllerManager SIGKILLs karmada-controller-manager and starts
// it again, as an operator restarting the Deployment does to make it take a
// member credential it does not follow (pristine's workaround). The new
// process has its own ports and Process; its log continues the same file.
func (cp *ControlPlane) RestartControllerManager(ctx context.Context) error {
	p := cp.Process(ControllerManager)
	if p == nil {
		return fmt.Errorf("karmada control plane %s: %s is not running", cp.opts.Name, ControllerManager)
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("karmada control plane %s: killing %s: %w", cp.opts.Name, ControllerManager, err)
	}
	if err := cp.startControllerManager(ctx); err != nil {
		return fmt.Errorf("karmada control plane %s: restarting %s: %w", cp.opts.Name, ControllerManager, err)
	}
	return nil
}

// stopGrace is how long a component may take to stop on SIGTERM: the
// logs are kept either way, and a clean exit flushes klog.
const stopGrace = 5 * time.Second

// stopComponents stops the components, last started first: a member's
// agent (JoinPull) before them all.
func (cp *ControlPlane) stopComponents() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return
	}
	cp.stopped = true
	for _, stop := range cp.cleanups {
		stop()
	}
	if p := cp.procs[Agent]; p != nil {
		_ = p.Stop(stopGrace)
	}
	running := cp.opts.Running()
	for i := len(running) - 1; i >= 0; i-- {
		if p := cp.procs[running[i]]; p != nil {
			_ = p.Stop(stopGrace)
		}
	}
}

// Stop stops every component, then karmada-apiserver and its etcd. The
// logs stay in Options.Dir. Stop is idempotent.
func (cp *ControlPlane) Stop() error {
	cp.stopComponents()
	return cp.API.Stop()
}
