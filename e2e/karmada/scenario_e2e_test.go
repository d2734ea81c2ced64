//go:build e2e

package karmada

import (
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// begin starts recording a scenario, one row of the suite's report: which
// build ran, what the suite requires of it, what it showed, and the
// evidence (e2ereport.Run says how a row's result is decided).
func (e *env) begin(t *testing.T, name string, b Build, expected e2ereport.Result) *e2ereport.Run {
	return recorder.Begin(t, e2ereport.Scenario{Name: name, Binary: string(b), Expected: expected, Notes: []string{e.standIn}})
}
