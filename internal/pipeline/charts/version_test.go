package charts

import (
	"strings"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

func TestChartVersionIsOCISafeSemVer(t *testing.T) {
	for _, tc := range []struct {
		pin            pins.Pin
		chart, appVers string
	}{
		{pins.Pin{Version: "v1.18.2", Revision: 2}, "1.18.2-holdfast.2", "v1.18.2-holdfast.2"},
		{pins.Pin{Version: "v1.6.4", Revision: 1}, "1.6.4-holdfast.1", "v1.6.4-holdfast.1"},
		{pins.Pin{Version: "v1.19.0-rc.0", Revision: 3}, "1.19.0-rc.0-holdfast.3", "v1.19.0-rc.0-holdfast.3"},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			got := ChartVersion(tc.pin)
			if got != tc.chart {
				t.Errorf("ChartVersion = %q, want %q", got, tc.chart)
			}
			if app := AppVersion(tc.pin); app != tc.appVers {
				t.Errorf("AppVersion = %q, want %q", app, tc.appVers)
			}
			// An OCI tag is [A-Za-z0-9_][A-Za-z0-9._-]{0,127}: no "+".
			if strings.ContainsAny(got, "+/:") || len(got) > 128 {
				t.Errorf("%q is not a valid OCI tag", got)
			}
			if !semver.IsValid("v" + got) {
				t.Errorf("%q is not SemVer 2", got)
			}
		})
	}
}

// The revision orders numerically and the upstream version first, which is
// what a registry listing or `helm search --devel` sorts by.
func TestChartVersionsOrderByUpstreamThenRevision(t *testing.T) {
	ordered := []pins.Pin{
		{Version: "v1.17.1", Revision: 9},
		{Version: "v1.18.2", Revision: 2},
		{Version: "v1.18.2", Revision: 10},
		{Version: "v1.18.3", Revision: 1},
	}
	for i := 1; i < len(ordered); i++ {
		a, b := "v"+ChartVersion(ordered[i-1]), "v"+ChartVersion(ordered[i])
		if semver.Compare(a, b) >= 0 {
			t.Errorf("%s does not sort before %s", a, b)
		}
	}
}
