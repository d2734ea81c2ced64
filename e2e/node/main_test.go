//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/node"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// The suites this package reports.
const (
	suiteNode       = "node"
	suiteWorkerNode = "worker-node"
	// suiteKarmadaNode is the Karmada chart on the node.
	suiteKarmadaNode = "karmada-node"
)

var recorders = map[string]*e2ereport.Recorder{}

func TestMain(m *testing.M) {
	root, err := toolcache.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, s := range []string{suiteNode, suiteWorkerNode, suiteKarmadaNode} {
		recorders[s] = e2ereport.NewRecorder(root, s)
	}
	code := m.Run()
	for s, r := range recorders {
		if r.Len() == 0 {
			continue
		}
		if err := r.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "writing the %s report: %v\n", s, err)
			code = 1
		}
	}
	os.Exit(code)
}

// beginScenario starts a report row of the patched build (what it must
// show is e2ereport.Catalog's); note, when not empty, describes the row's
// setup.
func beginScenario(t *testing.T, suite, name string, note string) *e2ereport.Run {
	s := e2ereport.Scenario{Name: name, Binary: "patched"}
	if note != "" {
		s.Notes = []string{note}
	}
	return recorders[suite].Begin(t, s)
}

// beginPristineScenario starts a report row of the pristine build (the
// catalogue's rows of it show the bug, RedAsExpected); note as
// beginScenario's.
func beginPristineScenario(t *testing.T, suite, name string, note string) *e2ereport.Run {
	s := e2ereport.Scenario{Name: name, Binary: "pristine"}
	if note != "" {
		s.Notes = []string{note}
	}
	return recorders[suite].Begin(t, s)
}

// probeImage is the suite's test program (./probe) as an image.
const probeImage = "holdfast.local/e2e-probe:test"

// TestNode starts one node for every scenario, runs them (in parallel
// where they do not interfere), stops the node and then checks that the
// host is as it was before.
func TestNode(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Available(); err != nil {
		t.Skipf("no real node here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// Every scenario that needs a stand-in image waits for this one build,
	// started before anything else; it is over before TestNode returns.
	standIns := startStandIns(ctx, root)
	defer func() { cancel(); <-standIns.done }()
	// A killed run's leftovers are not the host's: cleared first.
	if err := node.ClearStale(ctx, t.Logf); err != nil {
		t.Fatal(err)
	}
	before, err := snapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(ctx, node.Options{Root: root, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if t.Failed() {
			dst := filepath.Join(root, e2ereport.Dir, "logs", "node")
			if err := n.CopyLogs(dst); err != nil {
				t.Logf("keeping the node's logs: %v", err)
			} else {
				t.Logf("node logs kept in %s", dst)
			}
		}
		if err := n.Stop(); err != nil {
			t.Errorf("stopping the node: %v", err)
		}
		t.Logf("node start %s, stop %s", n.Timings().Start.Round(time.Millisecond), n.Timings().Stop.Round(time.Millisecond))
	}
	defer stop()

	probe := filepath.Join(t.TempDir(), "probe")
	if err := goBuild(root, probe, "./e2e/node/probe"); err != nil {
		t.Fatal(err)
	}
	if err := n.ImportProgram(ctx, probeImage, probe); err != nil {
		t.Fatal(err)
	}

	t.Run("scenarios", func(t *testing.T) {
		t.Run("pod-ready", func(t *testing.T) { t.Parallel(); testPodReady(t, n) })
		t.Run("kubelet-restart", func(t *testing.T) { t.Parallel(); testKubeletRestart(t, n) })
		t.Run("unreachable", func(t *testing.T) { t.Parallel(); testUnreachable(t, n) })
		t.Run("worker", func(t *testing.T) { t.Parallel(); testWorker(t, root, n, standIns) })
		t.Run("karmada", func(t *testing.T) { t.Parallel(); testKarmada(t, root, n, standIns) })
	})
	stop()

	t.Run("host-as-before", func(t *testing.T) {
		sc := beginScenario(t, suiteNode, "the host is left as it was (iptables, netns, links, cgroups, sysctls)",
			"compared before the node started and after it stopped: iptables-save and ip6tables-save (counters dropped), ip netns list, "+
				"ip link (names and flags), the folders under /sys/fs/cgroup/*/, and the sysctls kubelet writes")
		sc.Timing("node-start", n.Timings().Start)
		sc.Timing("node-stop", n.Timings().Stop)
		after, err := snapshotHost()
		if err != nil {
			sc.Fatalf("%v", err)
		}
		for _, d := range before.diff(after) {
			sc.Errorf("host changed: %s", d)
		}
		sc.PassWithTest()
	})
}
