//go:build e2e

package karmadacp

import (
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/e2e/dashboard"
	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// checkDashboard checks docs/dashboards/holdfast.json against mt, a scrape
// of the patched Karmada binary name taken after a rotation: every family
// its panels query for a Karmada binary is there with the labels they
// use. Families created only by a failure the scenario did not cause are
// noted as not checked (dashboard.Binary.AfterEvent); a missing name fails
// the scenario.
func checkDashboard(s *e2ereport.Run, name string, mt karmada.Metrics) {
	root, err := toolcache.Root()
	if err != nil {
		s.Errorf("dashboard check: %v", err)
		return
	}
	qs, err := dashboard.Load(filepath.Join(root, dashboard.File))
	if err != nil {
		s.Errorf("dashboard check: %v", err)
		return
	}
	r := dashboard.Check(qs, mt, dashboard.Karmada)
	for _, p := range r.Problems {
		s.Errorf("%s against %s's /metrics: %s", dashboard.File, name, p)
	}
	notYet := ""
	if len(r.NotYet) > 0 {
		notYet = "; not created yet, so not checked: " + strings.Join(r.NotYet, ", ")
	}
	s.Notef("%s: %d families its panels query found in %s's /metrics with their labels%s", dashboard.File, len(r.Checked), name, notYet)
}
