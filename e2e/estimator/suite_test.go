//go:build e2e

package estimator

import (
	"fmt"
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// suiteName names the suite's report (_output/reports/e2e/<suite>.json).
const suiteName = "karmada-scheduler-estimator"

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

// parallel bounds how many scenarios (each a member cluster and an
// estimator of its own) run at once: a kube-apiserver's start is the only
// costly step, and two at a time keep the measured recoveries from
// queueing behind other starts on two shared cores.
const parallel = 2

// slots holds one token per scenario running.
var slots = make(chan struct{}, parallel)

// run runs scenario f of build b as a parallel subtest name/b, once a slot
// is free; the slot is given back after the scenario's cleanups.
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

// TestSchedulerEstimator runs each scenario against the pristine and the
// patched build, each on a member cluster of its own.
func TestSchedulerEstimator(t *testing.T) {
	// The pristine rows first: their observation windows are the longest.
	run(t, "token-rotation", karmadacp.Pristine, testTokenRotation)
	run(t, "ca-rotation", karmadacp.Pristine, testCARotation)
	run(t, "cert-rotation", karmadacp.Pristine, testCertRotation)
	run(t, "token-rotation", karmadacp.Patched, testTokenRotation)
	run(t, "ca-rotation", karmadacp.Patched, testCARotation)
	run(t, "cert-rotation", karmadacp.Patched, testCertRotation)
	// Without a rotation, both builds must answer alike (the drop-in rule).
	run(t, "max-available-replicas", karmadacp.Pristine, testMaxAvailableReplicas)
	run(t, "max-available-replicas", karmadacp.Patched, testMaxAvailableReplicas)
}
