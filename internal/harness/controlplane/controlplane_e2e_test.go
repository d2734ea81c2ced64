//go:build e2e

package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// harnessSuite is this package's row group in the e2e report: how long the
// harness itself takes (tool builds, cluster start and restart), which
// every suite's budget depends on.
const harnessSuite = "harness"

var recorder *e2ereport.Recorder

func TestMain(m *testing.M) {
	root, err := toolcache.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	recorder = e2ereport.NewRecorder(root, harnessSuite)
	recorder.SetVersion("etcd", toolcache.Etcd.Version)
	recorder.SetVersion("kube-apiserver", toolcache.KubeAPIServer.Version)
	code := m.Run()
	if recorder.Len() > 0 {
		if err := recorder.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// record adds a harness scenario when t ends, passed unless t failed.
func record(t *testing.T, name string, timings map[string]time.Duration, notes ...string) {
	start := time.Now()
	t.Cleanup(func() {
		result := e2ereport.Pass
		if t.Failed() {
			result = e2ereport.Fail
		}
		recorder.Add(e2ereport.Scenario{Name: name, Binary: "-", Result: result, Expected: e2ereport.Pass,
			Duration: time.Since(start), Timings: timings, Notes: notes})
	})
}

// conditionTimeout bounds waits for things that take milliseconds to a few
// seconds (informers catching up, a watch noticing a dead server) on a
// loaded two-core machine.
const conditionTimeout = time.Minute

func binaries(t *testing.T) (etcd, apiServer string) {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	etcd, apiServer, err = EnsureBinaries(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	ensureOnce.Do(func() { ensureTook = time.Since(start) })
	return etcd, apiServer
}

// ensureTook is how long the first EnsureBinaries of the run took: a
// build on a cold cache, a stamp check on a warm one.
var (
	ensureOnce sync.Once
	ensureTook time.Duration
)

// processesUnder lists the pids whose command line mentions dir: every
// process of a cluster names its data or cert folder in its flags.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), dir) && alive(atoi(e.Name())) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return -1
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, conditionTimeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestClusters is the harness's proof: two clusters at once, ServiceAccount
// tokens minted, accepted and revoked, a restart that breaks watches and
// keeps data and endpoint, and a Stop that leaves nothing behind.
func TestClusters(t *testing.T) {
	etcd, apiServer := binaries(t)
	base := t.TempDir()
	timings := map[string]time.Duration{"tools-ensure": ensureTook}
	record(t, "two clusters: tokens, revocation, restart, stop", timings,
		"kube-apiserver caches successful token authentications for 10 s (not configurable): RevokeServiceAccount waits until old tokens are rejected")

	var a, b *Cluster
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() {
		a, errA = Start(t.Context(), Options{Name: "hub-a", Dir: filepath.Join(base, "hub-a"), Etcd: etcd, KubeAPIServer: apiServer})
	})
	wg.Go(func() {
		b, errB = Start(t.Context(), Options{Name: "hub-b", Dir: filepath.Join(base, "hub-b"), Etcd: etcd, KubeAPIServer: apiServer})
	})
	wg.Wait()
	for _, c := range []*Cluster{a, b} {
		if c != nil {
			t.Cleanup(func() { _ = c.Stop() })
		}
	}
	if errA != nil || errB != nil {
		t.Fatalf("starting two clusters at once: %v; %v", errA, errB)
	}
	t.Logf("start (two at once): hub-a %s, hub-b %s", a.Timings().Start.Round(time.Millisecond), b.Timings().Start.Round(time.Millisecond))
	timings["start-two-at-once-a"], timings["start-two-at-once-b"] = a.Timings().Start, b.Timings().Start
	if a.Endpoint() == b.Endpoint() {
		t.Fatalf("both clusters at %s", a.Endpoint())
	}
	ctx := t.Context()

	t.Run("tokens", func(t *testing.T) {
		old, err := a.ServiceAccountToken(ctx, "tenant", "agent", 0)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := a.TokenAccepted(ctx, old); err != nil || !ok {
			t.Fatalf("fresh token: accepted %v, %v", ok, err)
		}
		if ok, err := b.TokenAccepted(ctx, old); err != nil || ok {
			t.Errorf("hub-a's token on hub-b: accepted %v, %v; want rejected (own signing keys)", ok, err)
		}
		if err := a.BindClusterAdmin(ctx, "tenant", "agent"); err != nil {
			t.Fatal(err)
		}
		// old authenticated a moment ago, so the server's token cache
		// holds it: only waiting for it to be rejected makes this pass.
		revoking := time.Now()
		if err := a.RevokeServiceAccount(ctx, "tenant", "agent", old); err != nil {
			t.Fatal(err)
		}
		timings["revoke-recently-used-token"] = time.Since(revoking)
		if ok, err := a.TokenAccepted(ctx, old); err != nil || ok {
			t.Errorf("token minted before the revocation: accepted %v, %v; want rejected", ok, err)
		}
		fresh, err := a.ServiceAccountToken(ctx, "tenant", "agent", 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "a token minted after the revocation is accepted", func(ctx context.Context) (bool, error) {
			return a.TokenAccepted(ctx, fresh)
		})
		// Without the tokens, Revoke must still outlast the cache.
		if err := a.RevokeServiceAccount(ctx, "tenant", "agent"); err != nil {
			t.Fatal(err)
		}
		if ok, err := a.TokenAccepted(ctx, fresh); err != nil || ok {
			t.Errorf("a recently used token after a revocation without tokens: accepted %v, %v; want rejected", ok, err)
		}
		if _, err := a.ServiceAccountToken(ctx, "tenant", "agent", time.Minute); err == nil || strings.Contains(err.Error(), "eyJ") {
			t.Errorf("a one-minute token: err = %v, want the TokenRequest minimum named", err)
		}
	})

	t.Run("service accounts through an admin config alone", func(t *testing.T) {
		// As for an API server the harness did not start (a chart's
		// karmada-apiserver): nothing of the Cluster but its admin config.
		accounts, err := NewServiceAccounts("some-apiserver", a.AdminConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := accounts.BindClusterAdminAs(ctx, "operator-named", "elsewhere", "own"); err != nil {
			t.Fatal(err)
		}
		old, err := accounts.Token(ctx, "elsewhere", "own", 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		crb, err := a.Kubernetes().RbacV1().ClusterRoleBindings().Get(ctx, "operator-named", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(crb.Subjects) != 1 || crb.Subjects[0].Namespace != "elsewhere" || crb.Subjects[0].Name != "own" || crb.RoleRef.Name != "cluster-admin" {
			t.Errorf("binding operator-named: subjects %v, role %s", crb.Subjects, crb.RoleRef.Name)
		}
		// Used, so the server's token cache holds it.
		if ok, err := accounts.TokenAccepted(ctx, old); err != nil || !ok {
			t.Fatalf("fresh token: accepted %v, %v", ok, err)
		}
		if err := accounts.Revoke(ctx, "elsewhere", "own", old); err != nil {
			t.Fatal(err)
		}
		if ok, err := a.TokenAccepted(ctx, old); err != nil || ok {
			t.Errorf("token minted before the revocation: accepted %v, %v; want rejected", ok, err)
		}
		fresh, err := accounts.Token(ctx, "elsewhere", "own", 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// The binding names the ServiceAccount, so it still applies.
		cfg := rest.AnonymousClientConfig(a.AdminConfig())
		cfg.BearerToken = fresh
		own, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the new token authenticated and bound to cluster-admin", func(ctx context.Context) (bool, error) {
			_, err := own.CoreV1().Namespaces().Get(ctx, "elsewhere", metav1.GetOptions{})
			return err == nil, nil
		})
	})

	t.Run("restart breaks watches and keeps data and endpoint", func(t *testing.T) {
		cms := a.Kubernetes().CoreV1().ConfigMaps("default")
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-restart"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		token, err := a.ServiceAccountToken(ctx, "tenant", "survivor", 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// The watch is established once it delivers the existing object.
		select {
		case ev := <-w.ResultChan():
			t.Logf("watch open: %s", ev.Type)
		case <-time.After(conditionTimeout):
			t.Fatal("watch delivered nothing")
		}
		endpoint, oldPid := a.Endpoint(), a.APIServerProcess().Pid()

		if err := a.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("restart: %s", a.Timings().Restarts[0].Round(time.Millisecond))
		timings["restart"] = a.Timings().Restarts[0]

		closed := time.After(conditionTimeout)
	drain:
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					break drain
				}
			case <-closed:
				t.Fatal("a watch opened before Restart is still open after it")
			}
		}
		if a.Endpoint() != endpoint || a.APIServerProcess().Pid() == oldPid || alive(oldPid) {
			t.Errorf("after restart: endpoint %s (was %s), pid %d (was %d, alive %v)", a.Endpoint(), endpoint, a.APIServerProcess().Pid(), oldPid, alive(oldPid))
		}
		if _, err := cms.Get(ctx, "before-restart", metav1.GetOptions{}); err != nil {
			t.Errorf("object created before the restart: %v", err)
		}
		if ok, err := a.TokenAccepted(ctx, token); err != nil || !ok {
			t.Errorf("token minted before the restart: accepted %v, %v; want accepted (same signing key)", ok, err)
		}
		log, _ := os.ReadFile(filepath.Join(a.LogDir(), "kube-apiserver.log"))
		if n := strings.Count(string(log), "=== holdfast e2e: starting kube-apiserver"); n != 2 {
			t.Errorf("kube-apiserver.log has %d start markers, want 2 (the restart appends)", n)
		}
	})

	t.Run("apply CRD and custom resource in one stream", func(t *testing.T) {
		// The custom resource comes first: ApplyYAML must order and wait.
		docs := `
apiVersion: example.holdfast.dev/v1
kind: Widget
metadata:
  name: w1
  namespace: widgets
spec:
  size: 3
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.holdfast.dev
spec:
  group: example.holdfast.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`
		if err := a.ApplyYAML(ctx, []byte(docs)); err != nil {
			t.Fatal(err)
		}
		// Applying again updates in place.
		if err := a.ApplyYAML(ctx, []byte(strings.Replace(docs, "size: 3", "size: 4", 1))); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "example.holdfast.dev", Version: "v1", Resource: "widgets"}
		w, err := a.Dynamic().Resource(gvr).Namespace("widgets").Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if size, _, _ := unstructuredInt(w.Object, "spec", "size"); size != 4 {
			t.Errorf("spec.size = %d, want 4", size)
		}
		if err := a.ApplyYAML(ctx, []byte("apiVersion: example.holdfast.dev/v1\nkind: Gadget\nmetadata:\n  name: g\n")); err == nil || !strings.Contains(err.Error(), `Gadget "g"`) {
			t.Errorf("unknown kind: err = %v, want one naming Gadget \"g\"", err)
		}
	})

	t.Run("no token in any log", func(t *testing.T) {
		for _, c := range []*Cluster{a, b} {
			entries, err := os.ReadDir(c.LogDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(c.LogDir(), e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				// Every minted token is a JWT starting with "eyJ".
				if strings.Contains(string(data), a.adminToken) || strings.Contains(string(data), b.adminToken) || strings.Contains(string(data), "eyJ") {
					t.Errorf("cluster %s: %s contains a token", c.Name(), e.Name())
				}
			}
		}
	})

	t.Run("stop leaves nothing behind", func(t *testing.T) {
		for _, c := range []*Cluster{a, b} {
			pids := []int{c.EtcdProcess().Pid(), c.APIServerProcess().Pid()}
			p := c.ports
			if err := c.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := c.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("cluster %s: pid %d alive after Stop", c.Name(), pid)
				}
			}
			if left := processesUnder(t, c.Dir()); len(left) > 0 {
				t.Errorf("cluster %s: processes %v still use %s", c.Name(), left, c.Dir())
			}
			for _, port := range []int{p.apiServer, p.etcdClient, p.etcdPeer} {
				if !portFree(port) {
					t.Errorf("cluster %s: port %d still taken after Stop", c.Name(), port)
				}
			}
			if err := c.Restart(ctx); err == nil {
				t.Errorf("cluster %s: Restart after Stop succeeded", c.Name())
			}
		}
	})
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}

// TestStartFailureQuotesTheLogAndCleansUp starts a kube-apiserver that
// cannot start: the error must say which component failed, where its log
// is and what it said, and etcd must not be left running.
func TestStartFailureQuotesTheLogAndCleansUp(t *testing.T) {
	etcd, apiServer := binaries(t)
	dir := filepath.Join(t.TempDir(), "broken")
	_, err := Start(t.Context(), Options{Name: "broken", Dir: dir, Etcd: etcd, KubeAPIServer: apiServer,
		ExtraAPIServerFlags: []string{"--no-such-flag=1"}})
	if err == nil {
		t.Fatal("Start with an unknown kube-apiserver flag succeeded")
	}
	for _, want := range []string{"cluster broken", "kube-apiserver (broken) exited", "kube-apiserver.log", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if left := processesUnder(t, dir); len(left) > 0 {
		t.Errorf("processes %v left after a failed Start", left)
	}
}

// TestStartForTestStopsTheCluster checks the testing helper's cleanup from
// outside: the cluster of a finished subtest is gone.
func TestStartForTestStopsTheCluster(t *testing.T) {
	binaries(t) // build outside the subtest's clock
	var dir string
	t.Run("inner", func(t *testing.T) {
		c := StartForTest(t, Options{Name: "scoped"})
		dir = c.Dir()
		if _, err := c.Kubernetes().Discovery().ServerVersion(); err != nil {
			t.Fatal(err)
		}
	})
	if left := processesUnder(t, dir); len(left) > 0 {
		t.Errorf("processes %v of a finished test's cluster still run", left)
	}
}
