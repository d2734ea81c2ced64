//go:build e2e

package estimator

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/e2e/dashboard"
	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// checkDashboard checks docs/dashboards/holdfast.json against a scrape of
// the patched estimator taken after a rotation it followed: every family
// its kubeconfig-credential panels query is in the estimator's /metrics
// with the labels they use. Families created only by an event the scenario
// did not cause are noted as not checked; a missing name fails the row.
func (e *env) checkDashboard(ctx context.Context, s *e2ereport.Run) {
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
	mt, err := karmada.ScrapeMetrics(ctx, e.metricsURL)
	if err != nil {
		s.Errorf("dashboard check: scraping %s: %v", e.metricsURL, err)
		return
	}
	r := dashboard.Check(qs, mt, dashboard.KubeconfigFollower)
	for _, p := range r.Problems {
		s.Errorf("%s against the estimator's /metrics: %s", dashboard.File, p)
	}
	notYet := ""
	if len(r.NotYet) > 0 {
		notYet = "; not created yet, so not checked: " + strings.Join(r.NotYet, ", ")
	}
	s.Notef("%s: %d families its kubeconfig-credential panels query found in the estimator's /metrics with their labels%s", dashboard.File, len(r.Checked), notYet)
}
