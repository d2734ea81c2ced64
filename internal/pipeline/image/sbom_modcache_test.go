package image_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

// TestSBOMRealModuleCache builds testdata/licensed for the host platform
// and reads its SBOM against this machine's module cache and GOROOT, with
// the real detector: the licences Go binaries carry most come out as the
// modules' LICENSE files declare them. The build itself puts the modules
// in the module cache, so the test needs nothing downloaded beyond what
// holdfast's own build needs.
func TestSBOMRealModuleCache(t *testing.T) {
	needBinaries(t)
	bin := filepath.Join(t.TempDir(), "licensed")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/licensed")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/licensed: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "env", "-json", "GOROOT", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ GOROOT, GOMODCACHE string }
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	lic, err := modlicense.New(env.GOMODCACHE, env.GOROOT, modlicense.CycloneDX())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sbom, err := image.NewSBOM(provenance(), []image.Binary{{OS: runtime.GOOS, Arch: runtime.GOARCH, Path: bin}}, lic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBOM of %d bytes in %s", len(sbom.SPDX), time.Since(start))
	pkgs := indexSPDX(validateSPDX(t, sbom.SPDX))
	bom := decodeCycloneDX(t, sbom.CycloneDX)
	for _, c := range *bom.Components {
		if c.Name == "github.com/opencontainers/go-digest" && (c.Licenses == nil || (*c.Licenses)[0].Expression != "Apache-2.0 AND CC-BY-SA-4.0") {
			t.Errorf("CycloneDX component %s: licences %+v, want the expression", c.Name, c.Licenses)
		}
	}

	declared := map[string]string{}
	for _, p := range pkgs.byName {
		declared[p.PackageName] = p.PackageLicenseDeclared
		t.Logf("%s %s: %s (%s)", p.PackageName, p.PackageVersion, p.PackageLicenseDeclared, p.PackageComment)
	}
	for module, want := range map[string]string{
		"stdlib":                                 "BSD-3-Clause",
		"golang.org/x/mod":                       "BSD-3-Clause",
		"k8s.io/utils":                           "Apache-2.0",
		"github.com/google/go-containerregistry": "Apache-2.0",
		"sigs.k8s.io/yaml":                       "MIT",
		// Code under LICENSE, documentation under LICENSE.docs.
		"github.com/opencontainers/go-digest": "Apache-2.0 AND CC-BY-SA-4.0",
		// ISC, which the detector reads as 0BSD: not trusted.
		"github.com/davecgh/go-spew": "NOASSERTION",
		// holdfast's own module at provenance's made-up upstream version
		// is in no module cache; so the binary has no licence either.
		"github.com/holdfast-dist/holdfast": "NOASSERTION",
		"hello":                             "NOASSERTION",
	} {
		if got := declared[module]; got != want {
			t.Errorf("%s: licenseDeclared %q, want %s", module, got, want)
		}
	}
	var gaps []string
	for _, g := range sbom.LicenseGaps {
		gaps = append(gaps, g.Module)
	}
	if strings.Join(gaps, " ") != "github.com/holdfast-dist/holdfast github.com/davecgh/go-spew" {
		t.Errorf("licence gaps %v, want the main module's and go-spew's", sbom.LicenseGaps)
	}
}
