package karmadacp

import (
	"context"
	"fmt"
	"testing"
)

// A pristine row is RED only on evidence of the bug: a refusal that closed
// the step's window, or a 401 or conflict logged where the step could be
// refused. A step that merely timed out is inconclusive.
func TestJudgeStep(t *testing.T) {
	timeout := fmt.Errorf("Deployment default/web did not land on member1 with 2 replicas within 1m0s (last: on the member with 1 replicas): %w", context.DeadlineExceeded)
	blind := errBlindWindow{"GET /apis/...: not served 10s after member1's informer was refused with the object in place (...)"}
	const conflict = `objectwatcher.go:191] Failed to update resource(kind=Deployment, default/web) in cluster member1, err: Operation cannot be fulfilled on deployments.apps "web": the object has been modified`
	for _, tc := range []struct {
		name     string
		pristine bool
		err      error
		refusal  string
		want     stepVerdict
	}{
		{"pristine, a timeout and no refusal logged", true, timeout, "", stepInconclusive},
		{"pristine, a timeout with a conflict logged", true, timeout, conflict, stepBroke},
		{"pristine, the refusal window closed", true, blind, "", stepBroke},
		{"pristine, wrapped window error", true, fmt.Errorf("cache path: %w", blind), "", stepBroke},
		{"pristine, seen", true, nil, "", stepPassed},
		{"patched, a timeout", false, timeout, "", stepBroke},
		{"patched, seen despite a logged refusal", false, nil, conflict, stepPassed},
	} {
		if got := judgeStep(tc.pristine, tc.err, tc.refusal); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
