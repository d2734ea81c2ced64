package image_test

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/xeipuuv/gojsonschema"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

// decodeCycloneDX checks the BOM against the CycloneDX 1.6 JSON schema
// (the copy cyclonedx-go ships, with the SPDX licence list and the JSON
// signature schema it refers to, loaded under their $id so that nothing
// is fetched) and decodes it with cyclonedx-go.
func decodeCycloneDX(t *testing.T, raw []byte) *cdx.BOM {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/CycloneDX/cyclonedx-go").Output()
	if err != nil {
		t.Fatalf("finding cyclonedx-go's schemas: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "schema")
	file := func(name string) gojsonschema.JSONLoader {
		return gojsonschema.NewReferenceLoader("file://" + filepath.ToSlash(filepath.Join(dir, name)))
	}
	sl := gojsonschema.NewSchemaLoader()
	for id, name := range map[string]string{
		"http://cyclonedx.org/schema/spdx.schema.json":     "spdx.schema.json",
		"http://cyclonedx.org/schema/jsf-0.82.schema.json": "jsf-0.82.schemax.json",
	} {
		if err := sl.AddSchema(id, file(name)); err != nil {
			t.Fatalf("loading %s: %v", name, err)
		}
	}
	schema, err := sl.Compile(file("bom-1.6.schema.json"))
	if err != nil {
		t.Fatalf("compiling cyclonedx-go's CycloneDX 1.6 schema: %v", err)
	}
	result, err := schema.Validate(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range result.Errors() {
		t.Errorf("CycloneDX 1.6 schema: %s", e)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(raw), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("cyclonedx-go cannot read the BOM: %v", err)
	}
	return &bom
}

var uuidV5 = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestSBOMCycloneDX(t *testing.T) {
	in := input(t)
	sbom, err := image.NewSBOM(in.Provenance, in.Binaries, in.Licenses)
	if err != nil {
		t.Fatal(err)
	}
	bom := decodeCycloneDX(t, sbom.CycloneDX)
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != cdx.SpecVersion1_6 || bom.Version != 1 || !uuidV5.MatchString(bom.SerialNumber) {
		t.Errorf("BOM header: %s %s version %d serial %q", bom.BOMFormat, bom.SpecVersion, bom.Version, bom.SerialNumber)
	}
	md := bom.Metadata
	if md == nil || md.Timestamp != "2026-12-02T10:48:45Z" || md.Component == nil || md.Component.Name != "hello" || md.Component.Version != "v1.2.0-holdfast.3" {
		t.Fatalf("metadata %+v", md)
	}

	refs := map[string]cdx.Component{md.Component.BOMRef: *md.Component}
	byPlatform := map[string]cdx.Component{}
	byPURL := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		if _, dup := refs[c.BOMRef]; dup || c.BOMRef == "" {
			t.Errorf("component %s: bom-ref %q empty or repeated", c.Name, c.BOMRef)
		}
		refs[c.BOMRef] = c
		switch c.Type {
		case cdx.ComponentTypeApplication:
			for _, p := range *c.Properties {
				if p.Name == "holdfast:platform" {
					byPlatform[p.Value] = c
				}
			}
		case cdx.ComponentTypeLibrary:
			byPURL[c.PackageURL] = c
		default:
			t.Errorf("component %s of type %s", c.Name, c.Type)
		}
	}

	declared := func(c cdx.Component) string {
		if c.Licenses == nil || len(*c.Licenses) != 1 || (*c.Licenses)[0].License == nil {
			return ""
		}
		l := (*c.Licenses)[0].License
		if l.Acknowledgement != cdx.LicenseAcknowledgementDeclared {
			return "not declared: " + l.ID
		}
		return l.ID
	}
	for arch, path := range testdataBinaries {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		c, ok := byPlatform["linux/"+arch]
		if !ok {
			t.Errorf("no component for the linux/%s binary", arch)
			continue
		}
		if c.Name != "hello" || c.Hashes == nil || len(*c.Hashes) != 1 || (*c.Hashes)[0].Algorithm != cdx.HashAlgoSHA256 || (*c.Hashes)[0].Value != hex.EncodeToString(sum[:]) {
			t.Errorf("linux/%s binary component %+v, want SHA-256 %x", arch, c, sum)
		}
		if got := declared(c); got != "Apache-2.0" {
			t.Errorf("linux/%s binary: licence %q, want the main module's Apache-2.0 declared", arch, got)
		}
	}

	info, err := buildinfo.ReadFile(testdataBinaries["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	goVersion := strings.TrimPrefix(strings.Fields(info.GoVersion)[0], "go")
	want := map[string]string{
		"pkg:golang/" + info.Main.Path + "@v1.2.0": "Apache-2.0",
		"pkg:golang/stdlib@" + goVersion:           "BSD-3-Clause",
	}
	for _, d := range info.Deps {
		want["pkg:golang/"+d.Path+"@"+d.Version] = "BSD-3-Clause"
	}
	for purl, license := range want {
		c, ok := byPURL[purl]
		if !ok {
			t.Errorf("no component with purl %s", purl)
			continue
		}
		if got := declared(c); got != license {
			t.Errorf("%s: licence %q, want %s declared", purl, got, license)
		}
	}
	if len(byPURL) != len(want) {
		t.Errorf("%d library components, want %d", len(byPURL), len(want))
	}
	if main := byPURL["pkg:golang/"+info.Main.Path+"@v1.2.0"]; main.Pedigree == nil || !strings.Contains(main.Pedigree.Notes, in.Provenance.SeriesHash) {
		t.Errorf("main module pedigree %+v does not name the series", main.Pedigree)
	}

	// The subject depends on each binary, each binary on every module.
	depends := map[string][]string{}
	for _, d := range *bom.Dependencies {
		if _, ok := refs[d.Ref]; !ok {
			t.Errorf("dependency of unknown %s", d.Ref)
		}
		for _, on := range *d.Dependencies {
			if _, ok := refs[on]; !ok {
				t.Errorf("%s depends on unknown %s", d.Ref, on)
			}
		}
		depends[d.Ref] = *d.Dependencies
	}
	if len(depends[md.Component.BOMRef]) != 2 {
		t.Errorf("%s depends on %v, want both binaries", md.Component.BOMRef, depends[md.Component.BOMRef])
	}
	for platform, c := range byPlatform {
		if len(depends[c.BOMRef]) != len(want) {
			t.Errorf("the %s binary depends on %d modules, want %d", platform, len(depends[c.BOMRef]), len(want))
		}
	}

	one, err := image.NewSBOM(in.Provenance, in.Binaries[:1], in.Licenses)
	if err != nil {
		t.Fatal(err)
	}
	if decodeCycloneDX(t, one.CycloneDX).SerialNumber == bom.SerialNumber {
		t.Error("BOMs of different binaries share a serial number")
	}
}
