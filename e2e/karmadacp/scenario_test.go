//go:build e2e

package karmadacp

import (
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// begin starts recording a scenario, one row of the suite's report: which
// build ran, what the suite requires of it, what it showed, and the
// evidence. Log lines reach its notes through karmada.Lines, which redacts
// them.
func begin(t *testing.T, name, binary string, expected e2ereport.Result, notes ...string) *e2ereport.Run {
	return recorder.Begin(t, e2ereport.Scenario{Name: name, Binary: binary, Expected: expected, Notes: notes})
}
