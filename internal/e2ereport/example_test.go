package e2ereport_test

import (
	"fmt"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// A suite records one scenario per binary; the pristine upstream binary is
// expected to show the bug. The rotation scenarios' events are drawn on a
// timeline beside the report.
func ExampleReport_Markdown() {
	rep := e2ereport.Report{Suites: []e2ereport.Suite{{
		Suite: "karmada-control-plane",
		Scenarios: []e2ereport.Scenario{
			{Name: "rotation", Binary: "pristine", Result: e2ereport.RedAsExpected, Expected: e2ereport.RedAsExpected, Duration: 52 * time.Second,
				Events: []e2ereport.Event{{Name: e2ereport.EventRotation, At: 20 * time.Second}, {Name: e2ereport.EventFirstFailure, At: 21500 * time.Millisecond}}},
			{Name: "rotation", Binary: "patched", Result: e2ereport.Pass, Expected: e2ereport.Pass, Duration: 26 * time.Second,
				Timings: map[string]time.Duration{"restart-to-recovered": 2 * time.Second},
				Events:  []e2ereport.Event{{Name: e2ereport.EventRotation, At: 18 * time.Second}, {Name: e2ereport.EventRecovery, At: 23 * time.Second}}},
		},
	}}}
	fmt.Printf("%s", rep.Markdown())
	// Output:
	// # holdfast end-to-end report
	//
	// All 2 scenarios showed the expected result.
	//
	// A pristine (unpatched upstream) binary is expected to be red: that shows the scenario detects the bug the patch fixes. A pristine row expected to pass is a control: it shows upstream's own behaviour.
	//
	// ## karmada-control-plane
	//
	// | Scenario | Binary | Result | Expected | As expected | Duration | Timings | Notes |
	// |---|---|---|---|---|---|---|---|
	// | rotation | pristine | red-as-expected | red-as-expected | yes | 52s | rotation at 20s<br>first failure at 21.5s |  |
	// | rotation | patched | pass | pass | yes | 26s | restart-to-recovered 2s<br>rotation at 18s<br>recovery at 23s |  |
	//
	// ## Rotation timelines
	//
	// The events of each rotation scenario (rotation, first failure, recovery), a track per build (e2e-report writes the pictures beside this file; the Timings column has the figures). Each point is an event the scenario marked on its own clock; a build's events are drawn from its rotation (0 s), so the builds line up on it. A track without a rotation is drawn from the scenario's start.
	//
	// karmada-control-plane / rotation:
	//
	// ![rotation timeline per build](e2e-timeline-karmada-control-plane-rotation.svg)
}
