//go:build e2e

package karmada

import (
	"fmt"
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// suiteName names the suite's report (_output/reports/e2e/<suite>.json).
const suiteName = "karmada-rotation"

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
	if err := recorder.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "writing the %s report: %v\n", suiteName, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// TestKarmadaRotation runs every scenario against one Karmada host and one
// member cluster. The scenarios run one after another: each restarts a
// shared cluster, and each has its own Cluster object, ServiceAccounts and
// controller-manager, removed when it ends.
func TestKarmadaRotation(t *testing.T) {
	e := newEnv(t)
	t.Run("rotation/pristine", func(t *testing.T) { testRotation(t, e, Pristine) })
	t.Run("rotation/patched", func(t *testing.T) { testRotation(t, e, Patched) })
	t.Run("late-secret/patched", func(t *testing.T) { testLateSecret(t, e) })
	// Issue 16: three rotations in a row on the patched binary, and the
	// same restarts without rotation on the pristine one as the control.
	t.Run("repeated-rotation/patched", func(t *testing.T) {
		testRepeated(t, e, "repeated-rotation", Patched, repeatedRotationRounds)
	})
	t.Run("repeated-restart/pristine", func(t *testing.T) {
		testRepeated(t, e, "repeated-restart", Pristine, repeatedRestartRounds)
	})
	// The patched binary's restart-only control is opt-in: it shows the
	// same as the pristine one and would add two minutes to every run.
	t.Run("repeated-restart/patched", func(t *testing.T) {
		if os.Getenv(ControlsEnv) == "" {
			t.Skipf("set %s=1 to run the patched restart-only control", ControlsEnv)
		}
		testRepeated(t, e, "repeated-restart", Patched, repeatedRestartRounds)
	})
	// Last: it restarts the Karmada host with both controller-managers'
	// own credentials revoked.
	t.Run("own-credential", func(t *testing.T) { testOwnCredential(t, e) })
}
