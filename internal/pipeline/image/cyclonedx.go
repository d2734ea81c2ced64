package image

import (
	"bytes"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"

	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

// cdxSpecVersion is the specification the BOM follows: 1.6 rather than
// 1.7, the newest cyclonedx-go writes, which fewer SBOM readers know yet;
// 1.6 is the first with a licence's acknowledgement ("declared"), the
// match of SPDX's licenseDeclared.
const cdxSpecVersion = cdx.SpecVersion1_6

// cycloneDX writes the inventory as a CycloneDX BOM: the image's binary
// as the metadata's component; each platform's binary and each module a
// component (the bom-refs are the SPDX identifiers); the binaries
// depending on the modules they link. The serial number is a name-based
// UUID of the SPDX namespace and the timestamp the build date, so the same
// binaries give the same bytes.
func (inv *inventory) cycloneDX() ([]byte, error) {
	p := inv.p
	bom := cdx.NewBOM()
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(inv.namespace)).String()
	subject := p.Binary + "@" + p.Version
	bom.Metadata = &cdx.Metadata{
		Timestamp: p.Created.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: "holdfast", Version: p.Revision,
		}}},
		Component: &cdx.Component{
			BOMRef:      subject,
			Type:        cdx.ComponentTypeApplication,
			Name:        p.Binary,
			Version:     p.Version,
			Description: "holdfast's build of " + p.Binary + " from " + p.UpstreamModule + " " + p.UpstreamVersion + " with its patch series " + p.SeriesHash,
		},
		// The BOM's own licence, as SPDX's dataLicense.
		Licenses: &cdx.Licenses{{License: &cdx.License{ID: SPDXDataLicense}}},
	}
	var components []cdx.Component
	binaries := make([]string, 0, len(inv.bins))
	var deps []cdx.Dependency
	for _, f := range inv.bins {
		binaries = append(binaries, f.id)
		components = append(components, cdx.Component{
			BOMRef:      f.id,
			Type:        cdx.ComponentTypeApplication,
			Name:        p.Binary,
			Version:     p.Version,
			Description: licenseComment(f.comment(p), binaryLicense(f.main.license)),
			Hashes:      &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: f.sha256}},
			Licenses:    cdxLicenses(f.main.license),
			Properties:  &[]cdx.Property{{Name: "holdfast:platform", Value: f.platform()}},
		})
		linked := make([]string, 0, len(f.modules))
		for _, m := range f.modules {
			linked = append(linked, m.id)
		}
		deps = append(deps, cdx.Dependency{Ref: f.id, Dependencies: &linked})
	}
	for _, m := range inv.modules {
		c := cdx.Component{
			BOMRef:      m.id,
			Type:        cdx.ComponentTypeLibrary,
			Name:        m.path,
			Version:     m.version,
			Description: licenseComment(m.comment, m.license),
			PackageURL:  m.purl,
			Licenses:    cdxLicenses(m.license),
		}
		if m.main {
			c.Pedigree = &cdx.Pedigree{Notes: "patched by holdfast " + p.Version + ": patch series " + p.SeriesHash}
		}
		components = append(components, c)
	}
	bom.Components = &components
	deps = append([]cdx.Dependency{{Ref: subject, Dependencies: &binaries}}, deps...)
	bom.Dependencies = &deps

	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(bom, cdxSpecVersion); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cdxLicenses is a declared licence, or none when it was not found: a
// CycloneDX component without licences makes no claim, as SPDX's
// NOASSERTION. Several licences (A AND B) are an expression, which
// CycloneDX keeps apart from a single licence's id.
func cdxLicenses(r modlicense.Result) *cdx.Licenses {
	declared := cdx.LicenseAcknowledgementDeclared
	switch {
	case r.ID == "":
		return nil
	case strings.Contains(r.ID, " "):
		return &cdx.Licenses{{Expression: r.ID, Acknowledgement: &declared}}
	}
	return &cdx.Licenses{{License: &cdx.License{ID: r.ID, Acknowledgement: declared}}}
}
