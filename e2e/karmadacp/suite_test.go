//go:build e2e

package karmadacp

import (
	"fmt"
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/karmadacp"
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

// TestKarmadaControlPlane runs each scenario against the pristine and the
// patched build, each on a control plane and member of its own, one after
// the other: two cores do not run two Karmada control planes and their
// restarts side by side without skewing the timings.
func TestKarmadaControlPlane(t *testing.T) {
	t.Run("propagation/pristine", func(t *testing.T) { testPropagation(t, karmadacp.Pristine) })
	t.Run("propagation/patched", func(t *testing.T) { testPropagation(t, karmadacp.Patched) })
	t.Run("late-secret/patched", testLateSecret)
	t.Run("rotation/pristine", func(t *testing.T) { testRotation(t, karmadacp.Pristine) })
	t.Run("rotation/patched", func(t *testing.T) { testRotation(t, karmadacp.Patched) })
	t.Run("repeated-rotation/patched", func(t *testing.T) { testRepeated(t, "repeated-rotation", karmadacp.Patched, repeatedRotationRounds) })
	t.Run("repeated-restart/pristine", func(t *testing.T) { testRepeated(t, "repeated-restart", karmadacp.Pristine, repeatedRestartRounds) })
	t.Run("repeated-restart/patched", testRepeatedRestartControl)
	t.Run("own-credential/pristine", func(t *testing.T) { testOwnCredential(t, karmadacp.Pristine) })
	t.Run("own-credential/patched", func(t *testing.T) { testOwnCredential(t, karmadacp.Patched) })
}
