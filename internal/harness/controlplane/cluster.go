package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options describes a cluster to start.
type Options struct {
	// Name names the cluster in logs, errors and folders
	// ("karmada-host", "member1", "hub-a"); a DNS label.
	Name string
	// Dir holds the cluster's data, certificates, kubeconfig and logs. It
	// must not be shared between clusters.
	Dir string
	// Etcd and KubeAPIServer are the binaries, from toolcache.Ensure.
	Etcd, KubeAPIServer string
	// Address is where kube-apiserver listens and what it advertises;
	// default 127.0.0.1. A real node (internal/harness/node) needs an address
	// its pods can reach: the host end of the node's veth pair. etcd stays on
	// loopback either way. The serving certificate carries it as an IP SAN.
	Address net.IP
	// ExtraIPSANs are further IP SANs of the serving certificate, such as
	// the "kubernetes" Service's ClusterIP that in-cluster clients dial.
	ExtraIPSANs []net.IP
	// ServiceAccountAdmission leaves the ServiceAccount admission plugin on,
	// so pods get their token volume; only for a cluster whose
	// kube-controller-manager creates each namespace's "default"
	// ServiceAccount (internal/harness/node). A flag in ExtraAPIServerFlags
	// cannot do it: a repeated list flag appends to the harness's value.
	ServiceAccountAdmission bool
	// ExtraAPIServerFlags are appended to the harness's flags; a repeated
	// flag overrides the harness's value.
	ExtraAPIServerFlags []string
	// CARotations is how many times RestartWithNextCA may switch the
	// serving certificate to a CA never presented before; default 1. Each
	// CA is made up front, so that the admin clients trust all of them
	// from the start.
	CARotations int
	// StartTimeout bounds how long Start and Restart wait for readiness.
	// Default 2 minutes: a start takes a few seconds, but the suites share
	// two cores with builds and other clusters.
	StartTimeout time.Duration
}

const defaultStartTimeout = 2 * time.Minute

// portAttempts is how often Start chooses new ports when one was taken
// between FreePort and the bind. One retry almost always suffices; three
// make a collision with a busy neighbour practically impossible.
const portAttempts = 3

// clientQPS and clientBurst lift client-go's default client-side rate
// limit (5 QPS) for the admin clients: a suite applies dozens of CRDs and
// polls conditions, and throttling there only slows the run.
const (
	clientQPS   = 100
	clientBurst = 200
)

// adminUser is the admin's name in the token auth file and audit logs.
const adminUser = "holdfast-e2e-admin"

// Timings are the measured start and restart durations of a cluster, for
// the report.
type Timings struct {
	// Start is from Start being called to kube-apiserver being ready.
	Start time.Duration
	// Restarts are from each Restart being called to ready again.
	Restarts []time.Duration
}

// Cluster is a running control plane. Its methods are safe for concurrent
// use.
type Cluster struct {
	name     string
	opts     Options
	layout   layout
	ports    ports
	endpoint string
	// adminTrust is what the admin clients trust: the first and every next
	// CA, so that they keep working across RestartWithNextCA without being
	// rebuilt under callers that hold them.
	adminTrust []byte
	adminToken string
	admin      *rest.Config
	kube       kubernetes.Interface
	dynamic    dynamic.Interface
	accounts   *ServiceAccounts
	probe      *http.Client

	mu        sync.Mutex   // guards the fields below and serialises Restart and Stop
	caData    []byte       // the CA of the serving certificate kube-apiserver presents
	next      []servingSet // the CAs RestartWithNextCA has yet to switch to, in order
	etcd      *Process
	apiServer *Process
	stopped   bool
	timings   Timings
}

// Start starts a cluster and returns once kube-apiserver reports ready
// (/readyz), so bootstrap RBAC roles and the built-in priority classes
// exist. ctx bounds only the start; the cluster runs until Stop. On error
// nothing is left running.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	begin := time.Now()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.CARotations == 0 {
		o.CARotations = 1
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = defaultStartTimeout
	}
	c := &Cluster{name: o.Name, opts: o, layout: layout(o.Dir)}
	if err := c.prepare(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := c.startOnNewPorts(ctx)
		if err == nil {
			break
		}
		c.killAll()
		if !errors.Is(err, ErrAddrInUse) || attempt == portAttempts {
			return nil, err
		}
		// etcd recorded its peer URL in the data of the failed attempt.
		if err := os.RemoveAll(c.layout.etcdData()); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.name, err)
		}
	}
	if err := c.writeAdminKubeconfig(); err != nil {
		c.killAll()
		return nil, err
	}
	c.timings.Start = time.Since(begin)
	return c, nil
}

func (o Options) validate() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Dir == "" {
		return fmt.Errorf("cluster %s: Options.Dir is required", o.Name)
	}
	for what, path := range map[string]string{"Etcd": o.Etcd, "KubeAPIServer": o.KubeAPIServer} {
		if path == "" {
			return fmt.Errorf("cluster %s: Options.%s is required (a binary from toolcache.Ensure)", o.Name, what)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("cluster %s: Options.%s: %w", o.Name, what, err)
		}
	}
	return nil
}

// prepare makes the folders, key material and admin token of the cluster.
func (c *Cluster) prepare() error {
	if err := os.MkdirAll(c.layout.logs(), 0o755); err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	keys, err := newPKI(c.name, time.Now(), c.opts.CARotations, append([]net.IP{c.opts.Address}, c.opts.ExtraIPSANs...)...)
	if err != nil {
		return fmt.Errorf("cluster %s: generating certificates: %w", c.name, err)
	}
	if err := keys.write(c.layout.certs()); err != nil {
		return fmt.Errorf("cluster %s: writing certificates: %w", c.name, err)
	}
	c.caData = keys.caCert
	c.next = keys.next
	c.adminTrust = append([]byte(nil), keys.caCert...)
	for _, n := range keys.next {
		c.adminTrust = append(c.adminTrust, n.caCert...)
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	c.adminToken = hex.EncodeToString(token)
	// token,user,uid,"groups": the static token file format of
	// --token-auth-file.
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.adminToken, adminUser, adminUser)
	if err := os.WriteFile(c.layout.tokenAuthFile(), []byte(line), 0o600); err != nil {
		return fmt.Errorf("cluster %s: writing the token auth file: %w", c.name, err)
	}
	return nil
}

// startOnNewPorts chooses ports, points the clients at them and starts
// etcd and kube-apiserver.
func (c *Cluster) startOnNewPorts(ctx context.Context) error {
	p, err := freePorts(3)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	c.ports = ports{etcdClient: p[0], etcdPeer: p[1], apiServer: p[2], apiServerAddress: c.opts.Address}
	c.endpoint = "https://" + net.JoinHostPort(c.ports.apiServerHost(), strconv.Itoa(c.ports.apiServer))
	if err := c.buildClients(); err != nil {
		return err
	}
	if err := c.startEtcd(ctx); err != nil {
		return err
	}
	apiServer, err := c.startAPIServer(ctx)
	c.apiServer = apiServer
	return err
}

func (c *Cluster) buildClients() error {
	c.admin = &rest.Config{
		Host:            c.endpoint,
		BearerToken:     c.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.adminTrust},
		QPS:             clientQPS,
		Burst:           clientBurst,
		UserAgent:       "holdfast-e2e",
	}
	var err error
	if c.kube, err = kubernetes.NewForConfig(c.admin); err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	if c.dynamic, err = dynamic.NewForConfig(c.admin); err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	c.accounts = newServiceAccounts("cluster "+c.name, c.admin, c.kube)
	// The readiness probe is plain HTTP on the admin's TLS transport: a
	// REST client would retry and rate-limit on its own.
	rt, err := rest.TransportFor(c.admin)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	c.probe = &http.Client{Transport: rt}
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	p, err := StartProcess(context.Background(), ProcessOptions{
		Name:    "etcd (" + c.name + ")",
		Path:    c.opts.Etcd,
		Args:    etcdArgs(c.name, c.layout, c.ports),
		LogFile: c.layout.etcdLog(),
	})
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	c.etcd = p
	// etcd answers /health with {"health":"true",...} once it has a leader.
	health := HTTPProbe(http.DefaultClient, c.ports.etcdURL()+"/health", func(body string) bool {
		return strings.Contains(body, `"health":"true"`)
	})
	return WaitReady(ctx, c.name, p, health)
}

// startAPIServer starts kube-apiserver and waits for /readyz. The process
// is returned even on error so the caller can kill it.
func (c *Cluster) startAPIServer(ctx context.Context) (*Process, error) {
	p, err := StartProcess(context.Background(), ProcessOptions{
		Name:    "kube-apiserver (" + c.name + ")",
		Path:    c.opts.KubeAPIServer,
		Args:    c.apiServerArgs(),
		LogFile: c.layout.apiServerLog(),
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.name, err)
	}
	return p, WaitReady(ctx, c.name, p, HTTPProbe(c.probe, c.endpoint+"/readyz", nil))
}

func (c *Cluster) apiServerArgs() []string {
	args := apiServerArgs(c.layout, c.ports, c.opts.ExtraAPIServerFlags)
	if !c.opts.ServiceAccountAdmission {
		return args
	}
	kept := args[:0:0]
	for _, a := range args {
		if a != disableServiceAccountAdmission {
			kept = append(kept, a)
		}
	}
	return kept
}

// killAll kills whatever runs; used on failed starts.
func (c *Cluster) killAll() {
	for _, p := range []*Process{c.apiServer, c.etcd} {
		if p != nil {
			_ = p.Kill()
		}
	}
	c.apiServer, c.etcd = nil, nil
}

// Restart SIGKILLs kube-apiserver, waits until it is gone and its port is
// free, starts it again with the same flags, data and port, and waits for
// /readyz. etcd keeps running, so every object survives; every watch and
// connection to the server breaks, as the suites need (SIGTERM would keep
// serving open watches while the server drains). The log continues in the
// same file after a "starting" marker line.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restartLocked(ctx, nil)
}

// NextCAData is the CA of the serving certificate RestartWithNextCA switches
// kube-apiserver to next, for a test that publishes it before the switch
// (old and new CA in a bundle, as a careful CA rotation does). nil once
// Options.CARotations switches are done.
func (c *Cluster) NextCAData() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.next) == 0 {
		return nil
	}
	return append([]byte(nil), c.next[0].caCert...)
}

// RestartWithNextCA is Restart with kube-apiserver serving, on the same port,
// a certificate of a CA it has never presented (NextCAData), as a member
// whose CA was renewed does: a client that trusts only the old CA fails
// every new connection with "x509: certificate signed by unknown
// authority". The files are written while the server is down (a running
// kube-apiserver reloads its serving certificate files by itself); CAFile
// and CAData hold the new CA afterwards. The admin clients trust every CA
// from the start. Options.CARotations times per cluster.
func (c *Cluster) RestartWithNextCA(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.next) == 0 {
		return fmt.Errorf("cluster %s: RestartWithNextCA called more often than Options.CARotations (%d)", c.name, c.opts.CARotations)
	}
	next := c.next[0]
	return c.restartLocked(ctx, func() error {
		if err := next.write(c.layout.certs()); err != nil {
			return fmt.Errorf("cluster %s: switching to the next CA: %w", c.name, err)
		}
		c.caData, c.next = next.caCert, c.next[1:]
		return nil
	})
}

// restartLocked kills kube-apiserver, runs whileDown (if any) and starts it
// again. Callers hold c.mu.
func (c *Cluster) restartLocked(ctx context.Context, whileDown func() error) error {
	begin := time.Now()
	if c.stopped {
		return fmt.Errorf("cluster %s: Restart after Stop", c.name)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	if c.apiServer != nil {
		if err := c.apiServer.Kill(); err != nil {
			return fmt.Errorf("cluster %s: killing kube-apiserver: %w", c.name, err)
		}
	}
	if whileDown != nil {
		if err := whileDown(); err != nil {
			return err
		}
	}
	// The port may be taken for a moment by another cluster's FreePort
	// probe, which binds and closes at once; so wait and retry.
	for attempt := 1; ; attempt++ {
		if err := waitPortFree(ctx, c.ports.apiServer); err != nil {
			return fmt.Errorf("cluster %s: restarting kube-apiserver: %w", c.name, err)
		}
		p, err := c.startAPIServer(ctx)
		c.apiServer = p
		if err == nil {
			break
		}
		if p != nil {
			_ = p.Kill()
		}
		if !errors.Is(err, ErrAddrInUse) || attempt == portAttempts {
			return fmt.Errorf("restart: %w", err)
		}
	}
	c.timings.Restarts = append(c.timings.Restarts, time.Since(begin))
	return nil
}

// Stop kills kube-apiserver and etcd and waits until they are gone and
// their ports are free (or taken by a process that is not theirs). SIGKILL, not SIGTERM: the data is thrown away and a
// graceful kube-apiserver shutdown takes seconds per cluster for nothing.
// Stop is idempotent; the data and logs stay in Dir.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	ours := map[int]bool{}
	for _, p := range []*Process{c.apiServer, c.etcd} {
		if p != nil {
			ours[p.Pid()] = true
		}
	}
	c.killAll()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := leftBehind(ctx, []int{c.ports.apiServer, c.ports.etcdClient, c.ports.etcdPeer}, ours); err != nil {
		return fmt.Errorf("cluster %s: stopped, but %w", c.name, err)
	}
	return nil
}

// Name is Options.Name.
func (c *Cluster) Name() string { return c.name }

// Endpoint is "https://127.0.0.1:<port>" (or Options.Address); it stays the same across Restart.
func (c *Cluster) Endpoint() string { return c.endpoint }

// EtcdEndpoint is etcd's client URL, "http://127.0.0.1:<port>": another
// API server may store its own resources there beside kube-apiserver's, as
// karmada-aggregated-apiserver does in Karmada's etcd.
func (c *Cluster) EtcdEndpoint() string { return c.ports.etcdURL() }

// CAFile is the PEM file of the CA that signed the serving certificate
// (IP SANs 127.0.0.1, Options.Address and ExtraIPSANs; DNS SAN localhost).
func (c *Cluster) CAFile() string { return c.layout.cert(caCertFile) }

// CAData is the content of CAFile.
func (c *Cluster) CAData() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.caData...)
}

// AdminConfig returns a new copy of the admin's client config: a bearer
// token from the static token file, in group system:masters.
func (c *Cluster) AdminConfig() *rest.Config { return rest.CopyConfig(c.admin) }

// AdminKubeconfig is the path of a kubeconfig file for the admin.
func (c *Cluster) AdminKubeconfig() string { return c.layout.adminKubeconfig() }

// Kubernetes is a typed client for the admin.
func (c *Cluster) Kubernetes() kubernetes.Interface { return c.kube }

// Dynamic is a dynamic client for the admin.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dynamic }

// LogDir holds etcd.log and kube-apiserver.log; restarts append to the
// latter.
func (c *Cluster) LogDir() string { return c.layout.logs() }

// Dir is Options.Dir.
func (c *Cluster) Dir() string { return c.opts.Dir }

// Timings returns the measured start and restart durations.
func (c *Cluster) Timings() Timings {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.timings
	t.Restarts = append([]time.Duration(nil), t.Restarts...)
	return t
}

// APIServerProcess is the running kube-apiserver (a new one after each
// Restart).
func (c *Cluster) APIServerProcess() *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apiServer
}

// EtcdProcess is the cluster's etcd.
func (c *Cluster) EtcdProcess() *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.etcd
}
