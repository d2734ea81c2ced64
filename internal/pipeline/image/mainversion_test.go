package image

import (
	debug "runtime/debug"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

type noLicenses struct{ asked []string }

func (n *noLicenses) Module(path, version string) modlicense.Result {
	n.asked = append(n.asked, path+"@"+version)
	return modlicense.Result{}
}
func (n *noLicenses) Stdlib(string) modlicense.Result { return modlicense.Result{} }

// The SBOM names the main module at the version the binary records, so a
// scanner reading it orders the build as one reading the binary does; the
// licence is still read from the pinned upstream module.
func TestSBOMMainModuleVersionIsTheBinarys(t *testing.T) {
	p := Provenance{UpstreamVersion: "v1.18.2", SeriesHash: "h1:x", Version: "v1.18.2-holdfast.5"}
	for _, c := range []struct{ recorded, want string }{
		{"v1.18.3-0.20261204095742-4ec2b5d49fda", "v1.18.3-0.20261204095742-4ec2b5d49fda"},
		{"(devel)", "v1.18.2"},
	} {
		lic := &noLicenses{}
		info := &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Path: "github.com/karmada-io/karmada", Version: c.recorded}}
		mods := modulesOf(info, p, lic)
		if mods[0].version != c.want || !mods[0].main {
			t.Errorf("recorded %s: SBOM main module at %s, want %s", c.recorded, mods[0].version, c.want)
		}
		if len(lic.asked) == 0 || lic.asked[0] != "github.com/karmada-io/karmada@v1.18.2" {
			t.Errorf("licence looked up at %q, want the pinned upstream module", lic.asked)
		}
	}
}
