//go:build e2e

package karmadacp

import (
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// begin starts recording a scenario, one row of the suite's report: which
// build ran, what it showed, and the evidence. What the row must show is
// e2ereport.Catalog's, not the suite's. Log lines reach its notes through
// karmada.Lines, which redacts them.
func begin(t *testing.T, name, binary string, notes ...string) *e2ereport.Run {
	return recorder.Begin(t, e2ereport.Scenario{Name: name, Binary: binary, Notes: notes})
}
