//go:build e2e

package worker

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/e2e/dashboard"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
)

// checkDashboard scrapes the patched worker w, following two hubs, and
// checks docs/dashboards/holdfast.json against it: every family its panels
// query for the worker is there with the labels they use. A family the
// worker creates only after an event the scenario did not cause is noted
// as not checked (dashboard.Binary.AfterEvent); a missing name fails the
// scenario. (The suite's own reader keeps values only; this parses the
// exposition as Prometheus does, families and labels.)
func checkDashboard(ctx context.Context, sc *e2ereport.Run, root string, w *runningWorker) {
	qs, err := dashboard.Load(filepath.Join(root, dashboard.File))
	if err != nil {
		sc.Errorf("dashboard check: %v", err)
		return
	}
	mt, err := membercredmetrics.Scrape(ctx, nil, "http://"+w.metricsAddr+"/metrics")
	if err != nil {
		sc.Errorf("dashboard check: %v", err)
		return
	}
	r := dashboard.Check(qs, mt, dashboard.Worker)
	for _, p := range r.Problems {
		sc.Errorf("%s against the worker's /metrics: %s", dashboard.File, p)
	}
	sc.Notef("%s: %d families its panels query found in the worker's /metrics with their labels%s", dashboard.File, len(r.Checked), notYet(r))
}

// notYet says which families the check left out, or nothing.
func notYet(r dashboard.Report) string {
	if len(r.NotYet) == 0 {
		return ""
	}
	return "; not created yet, so not checked: " + strings.Join(r.NotYet, ", ")
}
