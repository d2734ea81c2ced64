//go:build scale

package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	ekcp "github.com/holdfast-dist/holdfast/e2e/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// The run's knobs, set by `make scale`.
const (
	// KEnv lists the fleet sizes (ParseKs); default "10".
	KEnv = "SCALE_K"
	// MergeEnv, when set, keeps the other fleet sizes' figures of the
	// report already in _output/reports (Report.Merge).
	MergeEnv = "SCALE_MERGE"
	// TimeoutEnv bounds each storm's wait for recovery (a Go duration);
	// default defaultTimeout.
	TimeoutEnv = "SCALE_TIMEOUT"
)

// defaultTimeout bounds a storm: pristine never recovers, so every
// pristine storm costs this much; patched is expected within seconds.
const defaultTimeout = 60 * time.Second

// setupTimeout bounds the first round (every workload placed, its status
// aggregated and searchable) on a fresh fleet.
const setupTimeout = 5 * time.Minute

// bumpParallel is how many Karmada Deployments a round updates at once.
const bumpParallel = 32

// poll is how often recovery is observed: the times reported are
// quantised by it.
const poll = RecoveryQuantum

// searchParallel bounds the search cache reads of one poll (one per member
// not yet seen there).
const searchParallel = 16

// sample is how often the controller-manager's /proc is read.
const sample = 250 * time.Millisecond

// settle is the least a fleet idles before its steady-state RSS is read;
// it idles three status periods if that is longer, so every member's
// informers have synced.
const settle = 10 * time.Second

// cpuProfileSeconds is how long the patched controller-manager's CPU
// profile runs from the start of the on-time storm at the largest K.
const cpuProfileSeconds = 20

// What the harness reads and writes on Karmada and the members.
const (
	policyName = "scale"
	// workloadSelector selects the Deployments ekcp.Deployment labels for
	// policyName (its workloadLabel).
	workloadSelector = "e2e.holdfast.dev/propagate=" + policyName
	workloadName     = "web"
	// roundAnnotation on the pod template is what each round changes:
	// a new template, so a new generation to propagate and aggregate.
	roundAnnotation = "scale.holdfast.dev/round"
	// skipAutoPropagation keeps Karmada's namespace controller from
	// placing each of the K namespaces on all K clusters (K² Works): each
	// namespace is created on its member directly
	// (policyv1alpha1.NamespaceSkipAutoPropagationLabel).
	skipAutoPropagation = "namespace.karmada.io/skip-auto-propagation"
	// searchCacheDeployments is karmada-search's cache path for one
	// namespace's Deployments (fmt verb: the namespace). The harness asks
	// per namespace, and only for members not yet seen: the cluster-wide
	// path answers with every member's workload in one body, which at
	// K = 100 took seconds per poll and delayed every other check of it.
	// cachedFrom is the annotation naming the member an item came from
	// (clusterv1alpha1.CacheSourceAnnotationKey).
	searchCacheDeployments = "/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/namespaces/%s/deployments"
	cachedFrom             = "resource.karmada.io/cached-from-cluster"
	// controllerManagerUser is the controller-manager's own identity on
	// karmada-apiserver (karmadacp runs it as its ServiceAccount).
	controllerManagerUser = "system:serviceaccount:" + karmadacp.SystemNamespace + ":" + string(karmadacp.ControllerManager)
)

var standIns = []string{
	"K Cluster objects share a few member kube-apiservers (min(K, MEMBER_APISERVERS), 3 unless set; each run's count is in its table's title); each Cluster is joined as `karmadactl join` joins one (karmadacp.JoinPush): its own ServiceAccount, token Secret, ClusterRole and binding on its member, so a distinct credential and a distinct set of informers in each Karmada binary. Clusters on one kube-apiserver see each other's objects in their informers",
	"each Cluster has its own namespace (scale-NNN, created on its member directly and kept from the namespace controller's auto-propagation), Deployment, PropagationPolicy and ResourceRegistry (that namespace's Deployments, that Cluster only)",
	"no kubelet or kube-controller-manager on the members: the harness writes each member Deployment's status (all replicas ready) through the status subresource as soon as the new template lands, as e2e/karmadacp does",
	"member tokens minted with the TokenRequest API (as in e2e/karmadacp); revocation deletes and recreates the ServiceAccount",
	"the storm ends with every member kube-apiserver SIGKILLed and restarted, as a signing-key rotation restarts it, so that every watch reconnects; without it a revoked token only shows when a watch expires",
	"the members' audit logs are at Metadata level: no request or response bytes, so none are reported",
	"a member list's cause is read from its member kube-apiserver's whole audit log by sender (component, user, resource, namespace): after 401 (a 401 its caller saw, the credential), watch cut (a watch with no ResponseComplete, which a SIGKILLed server never logs, or refused with another error), new informer (nothing earlier), replay of a 401 (the patched transport's replay, same agent, verb and URI), other; a 401 is logged with no user and named by its replay, so an unreplayed one is blamed on every list of its component within 5 s (docs/scale.md)",
	"one 2-core machine shared with other builds runs the control plane, every member and the harness: times include that contention",
}

// harnessAgents are the senders whose requests are not the fleet's cost:
// this test binary, internal/harness/controlplane's admin clients (their user
// agent) and the API servers' own loopback clients.
var harnessAgents = []string{Agent(rest.DefaultKubernetesUserAgent()), "holdfast-e2e", "kube-apiserver"}

func TestScale(t *testing.T) {
	kenv := os.Getenv(KEnv)
	if kenv == "" {
		kenv = "10"
	}
	ks, err := ParseKs(kenv)
	if err != nil {
		t.Fatal(err)
	}
	timeout := defaultTimeout
	if s := os.Getenv(TimeoutEnv); s != "" {
		if timeout, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s: %v", TimeoutEnv, err)
		}
	}
	period, err := ParseStatusPeriod(os.Getenv(StatusPeriodEnv))
	if err != nil {
		t.Fatal(err)
	}
	memberServers, err := ParseMemberAPIServers(os.Getenv(MemberAPIServersEnv))
	if err != nil {
		t.Fatal(err)
	}
	cmFlags, err := ParseControllerManagerFlags(os.Getenv(ControllerManagerFlagsEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "_output", "reports")
	etcd, apiServer, err := controlplane.EnsureBinaries(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[karmadacp.Build]karmadacp.Target{}
	for _, b := range []karmadacp.Build{karmadacp.Patched, karmadacp.Pristine} {
		if targets[b], err = karmadacp.EnsureBinaries(ctx, root, b, os.Stderr); err != nil {
			t.Fatal(err)
		}
	}
	rep := &Report{
		Generated: time.Now(), Wall: map[int]time.Duration{}, StatusPeriod: period, ControllerManagerFlags: cmFlags,
		Ks: ks, StandIns: standIns,
		Notes: []string{
			fmt.Sprintf("Karmada %s, pristine and patched; each storm waits up to %s for recovery; recovery is observed every %s", targets[karmadacp.Patched].Version, timeout, poll),
			"recovered: the member's Deployment got the round's template from Karmada, its status (written by the harness on the member) is aggregated into Karmada's Deployment (observedGeneration current, 1 ready), and karmada-search's cache path serves the new template from that member; timed from the end of the stimulus (on-time, control: every member kube-apiserver restarted; late-secret: the member's own Secret written)",
			"pristine+restart: the three binaries restarted (SIGTERM, then started again, in parallel) right after the stimulus (late-secret: after the last Secret), as an operator would; pristine is reset the same way, unmeasured, before the next storm",
		},
	}
	var previous *Report
	if os.Getenv(MergeEnv) != "" {
		if previous, err = ReadReport(filepath.Join(out, "scale.json")); err != nil {
			t.Logf("no report to merge with: %v", err)
		}
	}
	write := func() error {
		if previous != nil {
			if err := rep.Merge(previous); err != nil {
				t.Logf("keeping only this run's fleet sizes: %v", err)
			}
		}
		rep.Judge()
		return rep.Write(out)
	}
	t.Cleanup(func() {
		if err := write(); err != nil {
			t.Errorf("writing the scale report: %v", err)
		}
		t.Logf("scale report: %s", filepath.Join(out, "scale.md"))
	})
	top := slices.Max(ks)
	// Both builds' fleets of one K run side by side, but only one
	// measures at a time (measuring): the patched fleet's quiet spells
	// (see quiet) are when the pristine one runs its storms, so a K
	// costs the patched fleet's time instead of the sum of both. The
	// other fleet is idle and healthy meanwhile (a pristine fleet is
	// reset before it lets go).
	var measuring, reporting sync.Mutex
	for _, k := range ks {
		begin := time.Now()
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			for _, b := range []karmadacp.Build{karmadacp.Patched, karmadacp.Pristine} {
				t.Run(string(b), func(t *testing.T) {
					t.Parallel()
					f := startFleet(t, k, b, targets[b], etcd, apiServer, period, memberServers, cmFlags, &measuring)
					f.timeout = timeout
					if b == karmadacp.Patched && k == top {
						f.profileDir = filepath.Join(out, "scale")
					}
					runs := f.storms(t)
					f.keepLogs(t, filepath.Join(out, "scale", "logs", fmt.Sprintf("K%d-%s", k, b)))
					reporting.Lock()
					defer reporting.Unlock()
					rep.Planes = append(rep.Planes, f.plane)
					rep.Runs = append(rep.Runs, runs...)
					rep.Profiles = append(rep.Profiles, f.profiles...)
				})
			}
		})
		rep.Wall[k] = time.Since(begin)
		if err := write(); err != nil {
			t.Errorf("writing the scale report: %v", err)
		}
	}
}

// fleet is one build's control plane with K joined Clusters.
type fleet struct {
	k        int
	build    karmadacp.Build
	cp       *karmadacp.ControlPlane
	apiAudit string
	servers  []*controlplane.Cluster
	audits   []string
	// root is the fleet's test directory, which every process of the
	// fleet names in its flags; memberNames the member kube-apiservers'
	// (and their etcds') names, in theirs (processGroup).
	root        string
	memberNames []string
	clusters    []*cluster
	round       int
	timeout     time.Duration
	pprof       string // host:port of the controller-manager's pprof
	// calm is when the last disturbance ended (quiet).
	calm time.Time
	// measuring is held by whichever fleet is setting up or in a storm.
	measuring *sync.Mutex

	plane      Plane
	profileDir string
	profiles   []Profile
}

type cluster struct {
	name, ns string
	member   *karmadacp.Member
	server   int
}

func startFleet(t *testing.T, k int, b karmadacp.Build, target karmadacp.Target, etcd, apiServer string, period time.Duration, memberServers int, cmFlags []string, measuring *sync.Mutex) *fleet {
	ctx := t.Context()
	begin := time.Now()
	f := &fleet{k: k, build: b, measuring: measuring}
	dir := t.TempDir()
	f.root = filepath.Dir(dir)
	opts := karmadacp.Options{
		Name: "scale-" + string(b), Tree: target.Tree, Binaries: target.Binaries,
		Search: true, MetricsAdapter: true, Etcd: etcd, KubeAPIServer: apiServer,
	}
	var err error
	f.apiAudit = filepath.Join(dir, "karmada-audit", "audit.log")
	if opts.APIServerFlags, err = controlplane.AuditFlags(filepath.Dir(f.apiAudit), f.apiAudit); err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	f.pprof = fmt.Sprintf("127.0.0.1:%d", port)
	// Upstream's profiling flags (pkg/sharedcli/profileflag), in both
	// builds so that they run alike; only the patched one is profiled.
	opts.ControllerManager.Extra = append([]string{"--enable-pprof", "--profiling-bind-address=" + f.pprof}, cmFlags...)
	opts.ControllerManager.StatusUpdateFrequency = period
	f.cp = karmadacp.StartForTest(t, opts)

	n := APIServers(k, memberServers)
	f.servers = make([]*controlplane.Cluster, n)
	f.audits = make([]string, n)
	for i := range n {
		name := fmt.Sprintf("m%d-%s", i, b)
		f.memberNames = append(f.memberNames, name)
		f.audits[i] = filepath.Join(dir, name+"-audit", "audit.log")
		flags, err := controlplane.AuditFlags(filepath.Dir(f.audits[i]), f.audits[i])
		if err != nil {
			t.Fatal(err)
		}
		f.servers[i] = controlplane.StartForTest(t, controlplane.Options{Name: name, Etcd: etcd, KubeAPIServer: apiServer, ExtraAPIServerFlags: flags})
	}
	f.clusters = make([]*cluster, k)
	for i := range k {
		f.clusters[i] = &cluster{name: fmt.Sprintf("member-%03d", i+1), ns: fmt.Sprintf("scale-%03d", i+1), server: i % n}
	}
	karmada := f.cp.API
	err = Parallel(k, 8, func(i int) error {
		c := f.clusters[i]
		m, err := f.cp.JoinPush(ctx, c.name, f.servers[c.server])
		if err != nil {
			return err
		}
		c.member = m
		if err := createNamespace(ctx, karmada, c.ns, map[string]string{skipAutoPropagation: "true"}); err != nil {
			return err
		}
		if err := createNamespace(ctx, f.servers[c.server], c.ns, nil); err != nil {
			return err
		}
		if _, err := karmada.Dynamic().Resource(ekcp.PropagationPolicyGVR).Namespace(c.ns).Create(ctx, ekcp.PropagationPolicy(c.ns, policyName, c.name), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating PropagationPolicy %s/%s: %w", c.ns, policyName, err)
		}
		if _, err := karmada.Dynamic().Resource(karmadacp.ResourceRegistryGVR).Create(ctx, resourceRegistry(c), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating ResourceRegistry %s: %w", c.name, err)
		}
		d := ekcp.Deployment(c.ns, workloadName, policyName, 1)
		d.Spec.Template.Annotations = map[string]string{roundAnnotation: "0"}
		if _, err := karmada.Kubernetes().AppsV1().Deployments(c.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Deployment %s/%s: %w", c.ns, workloadName, err)
		}
		return c.member.WaitReady(ctx, setupTimeout)
	})
	if err != nil {
		t.Fatalf("joining %d members: %v", k, err)
	}
	start := time.Now()
	times, _ := f.await(ctx, 0, func(string) time.Time { return start }, setupTimeout)
	if s := Summarize(times); s.Recovered < k {
		t.Fatalf("setup: only %d of %d members had their workload placed, aggregated and searchable within %s", s.Recovered, k, setupTimeout)
	}
	f.plane = Plane{K: k, Build: variantOf(b), Setup: time.Since(begin)}
	f.calm = time.Now()
	// Idle a few status periods, then average a few readings, while
	// the other fleet is not measuring either.
	measuring.Lock()
	defer measuring.Unlock()
	time.Sleep(max(settle, 3*period))
	var sum int64
	const readings = 5
	for range readings {
		s, err := ReadProc(f.cp.Process(karmadacp.ControllerManager).Pid())
		if err != nil {
			t.Fatal(err)
		}
		sum += s.RSS
		time.Sleep(time.Second)
	}
	f.plane.SteadyRSS = sum / readings
	f.plane.SteadyHeap = f.liveHeap(t)
	t.Logf("%s fleet of %d ready in %s; controller-manager RSS %s, live heap %s", b, k, f.plane.Setup.Round(time.Second), mib(f.plane.SteadyRSS), mib(f.plane.SteadyHeap))
	return f
}

func variantOf(b karmadacp.Build) Variant {
	if b == karmadacp.Patched {
		return Patched
	}
	return Pristine
}

func createNamespace(ctx context.Context, c *controlplane.Cluster, name string, labels map[string]string) error {
	_, err := c.Kubernetes().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on %s: %w", name, c.Name(), err)
	}
	return nil
}

// resourceRegistry caches c's Deployments of c's namespace only, so that
// the search cache holds each workload once, not once per Cluster sharing
// its kube-apiserver.
func resourceRegistry(c *cluster) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": karmadacp.ResourceRegistryGVR.GroupVersion().String(),
		"kind":       "ResourceRegistry",
		"metadata":   map[string]any{"name": c.name},
		"spec": map[string]any{
			"targetCluster":     map[string]any{"clusterNames": []any{c.name}},
			"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": c.ns}},
		},
	}}
}

// storms runs the build's storms in order (see Storms).
func (f *fleet) storms(t *testing.T) []Run {
	var runs []Run
	if f.build == karmadacp.Patched {
		// Each storm after a quiet spell: the restarts and refusals of the
		// setup or of the storm before grow every member reflector's
		// backoff, which client-go forgets only after reflectorBackoffReset
		// without an error. Without it, the second storm would measure
		// the first one's backoff (the restart workaround starts fresh
		// processes, so it never carries any). Control goes last: what it
		// is compared on is its relists, not its time.
		for _, s := range []Storm{OnTime, LateSecret, Control} {
			f.quiet(t)
			f.measuring.Lock()
			runs = append(runs, f.storm(t, s, Patched))
			f.measuring.Unlock()
		}
		return runs
	}
	// One storm at a time (with the reset that follows a pristine one),
	// so the patched fleet can take its turn in between.
	locked := func(fn func()) {
		f.measuring.Lock()
		defer f.measuring.Unlock()
		fn()
	}
	locked(func() { runs = append(runs, f.storm(t, Control, Pristine)) })
	for _, s := range []Storm{OnTime, LateSecret} {
		locked(func() {
			runs = append(runs, f.storm(t, s, Pristine))
			f.reset(t)
		})
		locked(func() { runs = append(runs, f.storm(t, s, Restart)) })
	}
	return runs
}

// reflectorBackoffReset is how long a client-go reflector must go without
// an error before its backoff starts again from 800 ms
// (NewExponentialBackoffManager's resetDuration in tools/cache's
// NewReflector), plus a little.
const reflectorBackoffReset = 2*time.Minute + 5*time.Second

// quiet waits until reflectorBackoffReset has passed since the fleet's
// last disturbance (its setup, or the end of its last storm).
func (f *fleet) quiet(t *testing.T) {
	select {
	case <-t.Context().Done():
	case <-time.After(time.Until(f.calm.Add(reflectorBackoffReset))):
	}
}

// reset brings a pristine fleet back after a storm it did not recover
// from: the workaround, unmeasured.
func (f *fleet) reset(t *testing.T) {
	if err := f.restartBinaries(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	times, _ := f.await(t.Context(), f.round, func(string) time.Time { return now }, setupTimeout)
	if s := Summarize(times); s.Recovered < f.k {
		t.Fatalf("reset: %d of %d members recovered after restarting the binaries", s.Recovered, f.k)
	}
}

func (f *fleet) restartBinaries(ctx context.Context) error {
	return Parallel(len(karmadacp.ControlPlaneShipped), len(karmadacp.ControlPlaneShipped), func(i int) error {
		return f.cp.Restart(ctx, karmadacp.ControlPlaneShipped[i])
	})
}

func (f *fleet) restartServers(ctx context.Context) error {
	return Parallel(len(f.servers), len(f.servers), func(i int) error { return f.servers[i].Restart(ctx) })
}

// storm runs one stimulus and measures the recovery.
func (f *fleet) storm(t *testing.T, s Storm, v Variant) Run {
	ctx := t.Context()
	f.round++
	round := f.round
	run := Run{K: f.k, APIServers: len(f.servers), Storm: s, Variant: v, Timeout: f.timeout, Cores: runtime.NumCPU()}
	before := f.scrape(ctx, t)

	// Everything a rotation needs but the Secret write and the
	// revocation is made before the storm, so that the storm is only
	// those (issue 24: every token rotated and revoked within a second).
	var pending []*karmadacp.PendingRotation
	olds := make([]string, f.k)
	if s != Control {
		pending = make([]*karmadacp.PendingRotation, f.k)
		err := Parallel(f.k, 8, func(i int) error {
			olds[i] = f.clusters[i].member.Account()
			p, err := f.clusters[i].member.PrepareRotation(ctx)
			pending[i] = p
			return err
		})
		if err != nil {
			t.Fatalf("%s storm: %v", s, err)
		}
	}

	var meter Meter
	stopSampling := f.sampleControllerManager(&meter)
	procsBefore, procErr := ReadProcCPU("/proc")
	procsFrom := time.Now()

	var mu sync.Mutex
	t0 := map[string]time.Time{}
	setT0 := func(ns string, at time.Time) { mu.Lock(); t0[ns] = at; mu.Unlock() }
	run.Load, _ = LoadAverage()
	start := time.Now()
	var profiling sync.WaitGroup
	if f.profileDir != "" && s == OnTime && v == Patched {
		profiling.Add(1)
		go func() {
			defer profiling.Done()
			f.profile(t, "cpu", fmt.Sprintf("/debug/pprof/profile?seconds=%d", cpuProfileSeconds))
		}()
	}
	var late sync.WaitGroup
	switch s {
	case Control:
	case OnTime:
		// The Secrets first, all of them, then every old token revoked:
		// each Secret holds its new token before its old one dies.
		if err := Parallel(f.k, f.k, func(i int) error { _, err := pending[i].Write(ctx); return err }); err != nil {
			t.Fatalf("on-time storm: %v", err)
		}
		if err := Parallel(f.k, f.k, func(i int) error { return f.revoke(ctx, i, olds[i]) }); err != nil {
			t.Fatalf("on-time storm: %v", err)
		}
	case LateSecret:
		if err := Parallel(f.k, f.k, func(i int) error { return f.revoke(ctx, i, olds[i]) }); err != nil {
			t.Fatalf("late-secret storm: %v", err)
		}
	}
	run.Stimulus = time.Since(start)
	if err := f.restartServers(ctx); err != nil {
		t.Fatalf("restarting the member kube-apiservers: %v", err)
	}
	restarted := time.Now()
	if s == LateSecret {
		late.Add(1)
		go func() {
			defer late.Done()
			_ = Parallel(f.k, f.k, func(i int) error {
				c := f.clusters[i]
				time.Sleep(time.Until(restarted.Add(LateSpread * time.Duration(i) / time.Duration(f.k))))
				r, err := pending[i].Write(ctx)
				if err != nil {
					t.Errorf("late-secret storm: %v", err)
					return err
				}
				setT0(c.ns, r.Written)
				return nil
			})
		}()
	} else {
		for _, c := range f.clusters {
			setT0(c.ns, restarted)
		}
	}
	if err := f.bump(ctx, round); err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	if v == Restart {
		late.Wait()
		if err := f.restartBinaries(ctx); err != nil {
			t.Fatal(err)
		}
	}
	times, end, st := f.awaitStages(ctx, round, func(ns string) time.Time {
		mu.Lock()
		defer mu.Unlock()
		return t0[ns]
	}, f.timeout)
	if procErr == nil {
		var procsAfter []ProcCPU
		if procsAfter, procErr = ReadProcCPU("/proc"); procErr == nil {
			run.MachineCPU = CPUByGroup(procsBefore, procsAfter, f.processGroup)
			run.MachineCPUSpan = time.Since(procsFrom)
		}
	}
	if procErr != nil {
		t.Logf("no CPU by process for this storm: %v", procErr)
	}
	late.Wait()
	stopSampling()
	if f.profileDir != "" && s == OnTime && v == Patched {
		f.profile(t, "heap", "/debug/pprof/heap")
		profiling.Wait()
	}
	run.Window = end.Sub(start)
	f.calm = time.Now()
	run.Recovery = Summarize(times)
	run.Propagated, run.Aggregated, run.Searched = Summarize(st.propagated), Summarize(st.aggregated), Summarize(st.searched)
	run.CPU, run.PeakRSS = meter.CPU(), meter.PeakRSS
	f.countRequests(t, &run, start, end)
	after := f.scrape(ctx, t)
	scraped := time.Now()
	for _, c := range []karmadacp.Component{karmadacp.ControllerManager, karmadacp.Search, karmadacp.MetricsAdapter} {
		run.Credentials = append(run.Credentials, f.credentials(c, before[c], after[c], scraped))
	}
	t.Logf("K=%d %s %s: %d/%d recovered, p50 %s p99 %s max %s; member requests %d (lists %d: %s)", f.k, s, v, run.Recovery.Recovered, run.Recovery.Members,
		FormatDuration(run.Recovery.P50), FormatDuration(run.Recovery.P99), FormatDuration(run.Recovery.Max), run.Members.Total, run.Members.Lists, verbs(run.Members.ListsByCause))
	return run
}

// revoke revokes ServiceAccount account of cluster i's member the way
// controlplane.RevokeServiceAccount does (deleted, for its UID, and created
// again, so every token minted for it fails), without waiting for the
// member to reject the token: the member restart that ends the storm
// drops kube-apiserver's cache of successful authentications, which would
// otherwise keep an old token working for up to 10 s.
func (f *fleet) revoke(ctx context.Context, i int, account string) error {
	c := f.clusters[i]
	sas := f.servers[c.server].Kubernetes().CoreV1().ServiceAccounts(karmadacp.ClusterNamespace)
	sa, err := sas.Get(ctx, account, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("revoking member cluster %s's ServiceAccount %s: %w", c.name, account, err)
	}
	uid := sa.UID
	if err := sas.Delete(ctx, account, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return fmt.Errorf("revoking member cluster %s's ServiceAccount %s: deleting: %w", c.name, account, err)
	}
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("revoking member cluster %s's ServiceAccount %s: creating it again: %w", c.name, account, err)
	}
	return nil
}

// bump puts the round on every Karmada Deployment's pod template, as a
// user's update would: the change every member must receive. It is part
// of every member's time to recover, so it goes out bumpParallel at a
// time, which keeps it near a second at K = 100.
func (f *fleet) bump(ctx context.Context, round int) error {
	return Parallel(f.k, bumpParallel, func(i int) error {
		c := f.clusters[i]
		deployments := f.cp.API.Kubernetes().AppsV1().Deployments(c.ns)
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d, err := deployments.Get(ctx, workloadName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.Template.Annotations[roundAnnotation] = fmt.Sprint(round)
			_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
			return err
		})
	})
}

// await observes every poll until every member recovered round (see the
// report's notes) or timeout passed; a member's time is from t0(ns), and
// NotRecovered if it did not. It stands in for the member's deployment
// controller meanwhile (the status of a new template).
func (f *fleet) await(ctx context.Context, round int, t0 func(ns string) time.Time, timeout time.Duration) ([]time.Duration, time.Time) {
	times, end, _ := f.awaitStages(ctx, round, t0, timeout)
	return times, end
}

// stages are, per member, when each part of recovery was first seen
// (from the member's t0): the template on the member, the status
// aggregated, the search cache serving it.
type stages struct{ propagated, aggregated, searched []time.Duration }

func (f *fleet) awaitStages(ctx context.Context, round int, t0 func(ns string) time.Time, timeout time.Duration) ([]time.Duration, time.Time, stages) {
	want := fmt.Sprint(round)
	deadline := time.Now().Add(timeout)
	propagated := map[string]time.Time{}
	aggregated := map[string]time.Time{}
	searched := map[string]time.Time{}
	recovered := map[string]time.Time{}
	first := func(m map[string]time.Time, ns string, at time.Time) {
		if _, ok := m[ns]; !ok {
			m[ns] = at
		}
	}
	for {
		now := time.Now()
		landed := make([][]string, len(f.servers))
		_ = Parallel(len(f.servers), len(f.servers), func(i int) error {
			landed[i] = f.standInStatus(ctx, f.servers[i], want)
			return nil
		})
		for _, nss := range landed {
			for _, ns := range nss {
				first(propagated, ns, now)
			}
		}
		if list, err := f.cp.API.Kubernetes().AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: workloadSelector}); err == nil {
			for i := range list.Items {
				d := &list.Items[i]
				if ok, _ := ekcp.Aggregated(d, 1); ok && d.Spec.Template.Annotations[roundAnnotation] == want {
					first(aggregated, d.Namespace, now)
				}
			}
		}
		var unsearched []string
		for _, c := range f.clusters {
			if _, ok := searched[c.ns]; !ok {
				unsearched = append(unsearched, c.ns)
			}
		}
		found := make([]bool, len(unsearched))
		_ = Parallel(len(unsearched), searchParallel, func(i int) error {
			found[i] = f.searchServes(ctx, unsearched[i], want)
			return nil
		})
		for i, ns := range unsearched {
			if found[i] {
				first(searched, ns, now)
			}
		}
		for _, c := range f.clusters {
			_, agg := aggregated[c.ns]
			_, sea := searched[c.ns]
			if _, done := recovered[c.ns]; !done && agg && sea {
				recovered[c.ns] = now
			}
		}
		if len(recovered) == len(f.clusters) || now.After(deadline) || ctx.Err() != nil {
			since := func(m map[string]time.Time) []time.Duration {
				out := make([]time.Duration, len(f.clusters))
				for i, c := range f.clusters {
					at, ok := m[c.ns]
					if !ok {
						out[i] = NotRecovered
						continue
					}
					out[i] = max(0, at.Sub(t0(c.ns)))
				}
				return out
			}
			last := now
			if len(recovered) == len(f.clusters) {
				last = time.Time{}
				for _, at := range recovered {
					if at.After(last) {
						last = at
					}
				}
			}
			return since(recovered), last, stages{since(propagated), since(aggregated), since(searched)}
		}
		time.Sleep(time.Until(now.Add(poll)))
	}
}

// searchServes reports whether karmada-search's cache serves namespace
// ns's workload from its own member with the template of round want.
func (f *fleet) searchServes(ctx context.Context, ns, want string) bool {
	body, err := f.cp.API.Kubernetes().CoreV1().RESTClient().Get().AbsPath(fmt.Sprintf(searchCacheDeployments, ns)).DoRaw(ctx)
	if err != nil {
		return false
	}
	var list appsv1.DeploymentList
	if json.Unmarshal(body, &list) != nil {
		return false
	}
	for _, d := range list.Items {
		if d.Namespace == ns && d.Annotations[cachedFrom] == clusterOf(ns) && d.Spec.Template.Annotations[roundAnnotation] == want {
			return true
		}
	}
	return false
}

// clusterOf is the Cluster whose namespace ns is (scale-NNN, member-NNN).
func clusterOf(ns string) string { return "member-" + strings.TrimPrefix(ns, "scale-") }

// standInStatus writes, on server, the status of every workload whose
// template is of round want and not yet observed: the member deployment
// controller's part.
// It returns the namespaces whose workload has the template of round want.
func (f *fleet) standInStatus(ctx context.Context, server *controlplane.Cluster, want string) []string {
	list, err := server.Kubernetes().AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: workloadSelector})
	if err != nil {
		return nil
	}
	var landed []string
	var pending []*appsv1.Deployment
	for i := range list.Items {
		d := &list.Items[i]
		if d.Spec.Template.Annotations[roundAnnotation] != want {
			continue
		}
		landed = append(landed, d.Namespace)
		if d.Status.ObservedGeneration != d.Generation {
			pending = append(pending, d)
		}
	}
	// In parallel, so that a poll stays well under a second at K = 100.
	_ = Parallel(len(pending), bumpParallel, func(i int) error {
		d := pending[i]
		d.Status = ekcp.ReadyStatus(d)
		// A conflict (Karmada updating the object) is retried next poll.
		_, _ = server.Kubernetes().AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return nil
	})
	return landed
}

// otherFleets is in the flags of every process of a fleet: its test
// directory's name (t.TempDir of TestScale/K=N/<build>).
const otherFleets = "/TestScaleK="

// processGroup names the part of the run a process is, for the CPU spent
// over a storm's window (Run.MachineCPU): this fleet's member
// kube-apiservers, their etcds, each Karmada process by its binary's name
// (karmada-apiserver and its etcd too), the other fleet of the same K
// beside it, the harness itself, or none (the rest of the machine).
func (f *fleet) processGroup(argv []string) string {
	cmd := strings.Join(argv, " ")
	base := filepath.Base(argv[0])
	switch {
	case strings.Contains(cmd, f.root+"/"):
		for _, m := range f.memberNames {
			if strings.Contains(cmd, "/"+m+"/") || strings.Contains(cmd, "/"+m+"-audit/") {
				return "member " + base
			}
		}
		if base == "kube-apiserver" {
			return "karmada-apiserver"
		}
		if base == "etcd" {
			return "karmada etcd"
		}
		return base
	case strings.Contains(cmd, otherFleets):
		return "the other fleet"
	case strings.HasSuffix(base, ".test"):
		return "the harness"
	}
	return ""
}

// sampleControllerManager reads the controller-manager's /proc into m
// every sample until the returned func is called, following restarts.
func (f *fleet) sampleControllerManager(m *Meter) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	read := func() {
		if p := f.cp.Process(karmadacp.ControllerManager); p != nil && !p.Exited() {
			if s, err := ReadProc(p.Pid()); err == nil {
				m.Add(p.Pid(), s)
			}
		}
	}
	go func() {
		defer wg.Done()
		tick := time.NewTicker(sample)
		defer tick.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait(); read() }
}

func (f *fleet) scrape(ctx context.Context, t *testing.T) map[karmadacp.Component]membercredmetrics.Metrics {
	out := map[karmadacp.Component]membercredmetrics.Metrics{}
	for _, c := range karmadacp.ControlPlaneShipped {
		m, err := f.cp.Metrics(ctx, c)
		if err != nil {
			t.Logf("membercred counters: %v", err)
			continue
		}
		out[c] = m
	}
	return out
}

// credentials sums component c's membercred counters of every member
// between two scrapes, the second taken at scraped. A member whose
// periodic re-read was due by then (its last refresh before the storm plus
// the refresh period the binaries run with, upstream's flags setting none)
// may read twice, once for the rotation (OneReadPerRotation).
func (f *fleet) credentials(c karmadacp.Component, before, after membercredmetrics.Metrics, scraped time.Time) Credentials {
	cr := Credentials{Component: string(c)}
	for i, cl := range f.clusters {
		if after.HasMemberCredential(cl.name) {
			cr.Served = true
		}
		// A restarted component's counters start from zero again.
		d := after.MemberCredential(cl.name)
		if b := before.MemberCredential(cl.name); d.Refreshes >= b.Refreshes {
			d = d.Sub(b)
		}
		if i == 0 || d.Refreshes < cr.ReadsMin {
			cr.ReadsMin = d.Refreshes
		}
		cr.ReadsMax = max(cr.ReadsMax, d.Refreshes)
		if d.Refreshes == 1 {
			cr.MembersRead1++
		}
		last, ok := before.LastRefreshed(cl.name)
		due := ok && !last.Add(membercred.DefaultRefreshPeriod).After(scraped)
		if due {
			cr.PeriodicDue++
		}
		if OneReadPerRotation(d.Refreshes, due) {
			cr.MembersOnePerRotation++
		}
		cr.UnauthorizedMax = max(cr.UnauthorizedMax, d.Unauthorized)
		cr.UnauthorizedTotal += d.Unauthorized
		cr.Recovered += d.Recovered
		cr.Persisted += d.Persisted
	}
	return cr
}

func (f *fleet) countRequests(t *testing.T, run *Run, from, to time.Time) {
	for _, path := range f.audits {
		events, err := controlplane.ReadAudit(path)
		if err != nil {
			t.Fatal(err)
		}
		run.Members = run.Members.Add(CountRequests(events, from, to, harnessAgents...))
	}
	events, err := controlplane.ReadAudit(f.apiAudit)
	if err != nil {
		t.Fatal(err)
	}
	run.Karmada = CountRequests(events, from, to, harnessAgents...)
	for _, n := range SecretReads(events, controllerManagerUser, karmadacp.ClusterNamespace, from, to) {
		run.SecretRequests += n
	}
}

// keepLogs copies the logs of the binaries that hold member clients into
// dir, where the report's figures can be traced to what each logged.
func (f *fleet) keepLogs(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return
	}
	for _, c := range karmadacp.ControlPlaneShipped {
		name := string(c) + ".log"
		data, err := os.ReadFile(filepath.Join(f.cp.API.LogDir(), name))
		if err != nil {
			t.Logf("keeping %s: %v", name, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// liveHeap is the median of a few readings of the controller-manager's
// live heap, each after a collection it is asked to run (pprof's gc=1).
func (f *fleet) liveHeap(t *testing.T) int64 {
	const readings = 3
	var heaps []int64
	for range readings {
		resp, err := http.Get("http://" + f.pprof + "/debug/pprof/heap?gc=1&debug=1")
		if err != nil {
			t.Fatalf("live heap of the controller-manager: %v", err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("live heap of the controller-manager: %s %v", resp.Status, err)
		}
		heap, err := ParseHeapAlloc(data)
		if err != nil {
			t.Fatalf("live heap of the controller-manager: %v", err)
		}
		heaps = append(heaps, heap)
		time.Sleep(time.Second)
	}
	slices.Sort(heaps)
	return heaps[len(heaps)/2]
}

// profile saves the controller-manager's pprof profile at path into the
// report folder and notes its top frames.
func (f *fleet) profile(t *testing.T, kind, path string) {
	if err := os.MkdirAll(f.profileDir, 0o755); err != nil {
		t.Error(err)
		return
	}
	file := filepath.Join(f.profileDir, fmt.Sprintf("controller-manager-K%d-%s.pprof", f.k, kind))
	resp, err := http.Get("http://" + f.pprof + path)
	if err != nil {
		t.Errorf("%s profile of the controller-manager: %v", kind, err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("%s profile of the controller-manager: %s %v", kind, resp.Status, err)
		return
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Error(err)
		return
	}
	p := Profile{K: f.k, Kind: kind, File: file}
	args := []string{"tool", "pprof", "-top", "-nodecount=12"}
	if kind == "heap" {
		args = append(args, "-sample_index=inuse_space")
	}
	top, err := exec.Command("go", append(args, file)...).CombinedOutput()
	if err != nil {
		p.Top = []string{fmt.Sprintf("go tool pprof: %v", err)}
	} else {
		p.Top = strings.Split(strings.TrimSpace(string(top)), "\n")
	}
	f.profiles = append(f.profiles, p)
}
