//go:build e2e

package karmadacp

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// suiteName names the suite's report (_output/reports/e2e/<suite>.json).
const suiteName = "karmada-control-plane"

// recorder collects every scenario's outcome; TestMain writes it once the
// tests are done, whatever they did.
var recorder *e2ereport.Recorder

func TestMain(m *testing.M) {
	root, err := toolcache.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	recorder = e2ereport.NewRecorder(root, suiteName)
	code := m.Run()
	// -run may have selected nothing of the suite: keep the last report.
	if recorder.Len() > 0 {
		if err := recorder.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "writing the %s report: %v\n", suiteName, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// ParallelEnv bounds how many scenarios (each on a control plane and
// members of its own) run at once; default defaultParallel.
const ParallelEnv = "HOLDFAST_E2E_CP_PARALLEL"

// defaultParallel: a scenario spends most of its time waiting on a
// condition or a stated window (a pristine build's, up to client-go's
// reflector backoff), during which its processes are idle; what costs CPU
// is a control plane's start (about 6 s of two cores) and a member's
// restart. Three at a time keeps two cores busy without stretching the
// patched builds' sub-second steps past their two-minute bounds; the
// timings reported are measured under that load, and say so.
const defaultParallel = 3

// slots holds one token per scenario running.
var slots chan struct{}

// run runs scenario f of build b as a parallel subtest name/b, once a slot
// is free. The slot is taken before and given back after everything the
// scenario started (its cleanups run first), so at most cap(slots)
// control planes exist at once.
func run(t *testing.T, name string, b karmadacp.Build, f func(*testing.T, karmadacp.Build)) {
	t.Run(name+"/"+string(b), func(t *testing.T) {
		t.Parallel()
		select {
		case slots <- struct{}{}:
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
		t.Cleanup(func() { <-slots })
		f(t, b)
	})
}

// TestKarmadaControlPlane runs each scenario against the pristine and the
// patched build, each on a control plane and members of its own,
// ParallelEnv at a time.
func TestKarmadaControlPlane(t *testing.T) {
	n := defaultParallel
	if v := os.Getenv(ParallelEnv); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 {
			t.Fatalf("%s=%q: want a positive number of scenarios at once", ParallelEnv, v)
		}
		n = p
	}
	slots = make(chan struct{}, n)
	// Longest first, so that the last to finish is a short one.
	run(t, "propagation", karmadacp.Pristine, testPropagation)
	run(t, "repeated-rotation", karmadacp.Patched, func(t *testing.T, b karmadacp.Build) { testRepeated(t, "repeated-rotation", b, repeatedRotationRounds) })
	run(t, "two-members", karmadacp.Pristine, testTwoMembers)
	run(t, "repeated-restart", karmadacp.Pristine, func(t *testing.T, b karmadacp.Build) { testRepeated(t, "repeated-restart", b, repeatedRestartRounds) })
	run(t, "rotation", karmadacp.Pristine, testRotation)
	run(t, "agent-rotation", karmadacp.Pristine, testAgentRotation)
	run(t, "agent-cert-rotation", karmadacp.Pristine, testAgentCertRotation)
	run(t, "metrics", karmadacp.Pristine, testMetrics)
	run(t, "search", karmadacp.Pristine, testSearch)
	run(t, "search", karmadacp.Patched, testSearch)
	run(t, "own-credential", karmadacp.Pristine, testOwnCredential)
	run(t, "own-credential", karmadacp.Patched, testOwnCredential)
	run(t, "two-members", karmadacp.Patched, testTwoMembers)
	run(t, "late-secret", karmadacp.Patched, func(t *testing.T, _ karmadacp.Build) { testLateSecret(t) })
	run(t, "propagation", karmadacp.Patched, testPropagation)
	run(t, "rotation", karmadacp.Patched, testRotation)
	run(t, "metrics", karmadacp.Patched, testMetrics)
	run(t, "repeated-restart", karmadacp.Patched, func(t *testing.T, _ karmadacp.Build) { testRepeatedRestartControl(t) })
	run(t, "ca-rotation-overlap", karmadacp.Pristine, testCAOverlap)
	run(t, "ca-rotation-replaced", karmadacp.Pristine, testCAReplaced)
	run(t, "ca-rotation-overlap", karmadacp.Patched, testCAOverlap)
	run(t, "ca-rotation-replaced", karmadacp.Patched, testCAReplaced)
	run(t, "search-ca-rotation", karmadacp.Pristine, testSearchCAReplaced)
	run(t, "search-ca-rotation", karmadacp.Patched, testSearchCAReplaced)
	run(t, "metrics-ca-rotation", karmadacp.Pristine, testMetricsCAReplaced)
	run(t, "metrics-ca-rotation", karmadacp.Patched, testMetricsCAReplaced)
	run(t, "search-ca-rotation-overlap", karmadacp.Pristine, testSearchCAOverlap)
	run(t, "search-ca-rotation-overlap", karmadacp.Patched, testSearchCAOverlap)
	run(t, "metrics-ca-rotation-overlap", karmadacp.Pristine, testMetricsCAOverlap)
	run(t, "metrics-ca-rotation-overlap", karmadacp.Patched, testMetricsCAOverlap)
	run(t, "ca-rotation-lists", karmadacp.Pristine, testCARelist)
	run(t, "ca-rotation-lists", karmadacp.Patched, testCARelist)
	run(t, "secret-reads", karmadacp.Patched, testSecretReads)
	run(t, "agent-rotation", karmadacp.Patched, testAgentRotation)
	run(t, "agent-cert-rotation", karmadacp.Patched, testAgentCertRotation)
	run(t, "agent-own-credential", karmadacp.Patched, testAgentOwnCredential)
}
