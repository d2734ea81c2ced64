package e2ereport_test

import (
	"fmt"
	"time"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

// A suite records one scenario per binary; the pristine upstream binary is
// expected to show the bug.
func ExampleReport_Markdown() {
	rep := e2ereport.Report{Suites: []e2ereport.Suite{{
		Suite: "karmada-rotation",
		Scenarios: []e2ereport.Scenario{
			{Name: "rotation", Binary: "pristine", Result: e2ereport.RedAsExpected, Expected: e2ereport.RedAsExpected, Duration: 52 * time.Second},
			{Name: "rotation", Binary: "patched", Result: e2ereport.Pass, Expected: e2ereport.Pass, Duration: 26 * time.Second,
				Timings: map[string]time.Duration{"restart-to-recovered": 2 * time.Second}},
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
	// ## karmada-rotation
	//
	// | Scenario | Binary | Result | Expected | As expected | Duration | Timings | Notes |
	// |---|---|---|---|---|---|---|---|
	// | rotation | pristine | red-as-expected | red-as-expected | yes | 52s |  |  |
	// | rotation | patched | pass | pass | yes | 26s | restart-to-recovered 2s |  |
	//
	// ## Rotation timings
	//
	// The timings of each rotation scenario, a lane per build (e2e-report writes the pictures beside this file). Each bar is one timing of the row, from its own start (its name says which: member-restart from the kill, restart-to-recovered from the restart); the rows carry no common clock.
	//
	// karmada-rotation / rotation:
	//
	// ![rotation timings per build](e2e-timeline-karmada-rotation-rotation.svg)
}
