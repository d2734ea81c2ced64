package image

import (
	"fmt"
	"time"

	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

// The subset of SPDX 2.3's JSON shape holdfast writes
// (https://spdx.github.io/spdx-spec/v2.3/). A dozen fields do not justify
// linking the full github.com/spdx/tools-golang model into holdfast (it
// brings its own tag-value, RDF and YAML stacks); the tests read every
// document back with tools-golang's JSON reader into its 2.3 model, run
// its validation, and check each licence with github.com/github/go-spdx,
// so the maintained parser, not these structs, says the shape is right.
// Field names follow the spec's JSON schema exactly.

// SPDX constants of the document.
const (
	SPDXVersion     = "SPDX-2.3"
	SPDXDataLicense = "CC0-1.0"
	SPDXDocumentID  = "SPDXRef-DOCUMENT"
	// SBOMMediaType is the media type of the SBOM blob and the artifact
	// type of the manifest that attaches it to an image.
	SBOMMediaType = "application/spdx+json"
	// noAssertion is SPDX's "the author makes no claim".
	noAssertion = "NOASSERTION"
)

// SPDXDocument is an SPDX 2.3 document.
type SPDXDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      SPDXCreationInfo   `json:"creationInfo"`
	Packages          []SPDXPackage      `json:"packages"`
	Relationships     []SPDXRelationship `json:"relationships"`
}

// SPDXCreationInfo says who made the document and when.
type SPDXCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
	Comment  string   `json:"comment,omitempty"`
}

// SPDXPackage is a binary, a Go module or the Go standard library.
type SPDXPackage struct {
	Name                  string            `json:"name"`
	SPDXID                string            `json:"SPDXID"`
	VersionInfo           string            `json:"versionInfo,omitempty"`
	DownloadLocation      string            `json:"downloadLocation"`
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	Checksums             []SPDXChecksum    `json:"checksums,omitempty"`
	LicenseConcluded      string            `json:"licenseConcluded"`
	LicenseDeclared       string            `json:"licenseDeclared"`
	CopyrightText         string            `json:"copyrightText"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
	Comment               string            `json:"comment,omitempty"`
	ExternalRefs          []SPDXExternalRef `json:"externalRefs,omitempty"`
}

// SPDXChecksum is a file's digest.
type SPDXChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// SPDXExternalRef is a package URL, for vulnerability scanners.
type SPDXExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// SPDXRelationship links two elements.
type SPDXRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// spdxLicenseComment says, once per document, where the licences come
// from and what NOASSERTION means.
const spdxLicenseComment = "licenseDeclared is what each module's licence files declare (A AND B when they declare several), " +
	"found in the module cache (the standard library's in GOROOT) by cyclonedx-gomod's detector " +
	"(go-license-detector, best match at a confidence of 0.85 or more) less its known misreadings; a binary's is its main module's. " +
	"NOASSERTION: not found or not trusted, the package's comment says why. " +
	"licenseConcluded is NOASSERTION throughout: holdfast reads licence files, not the code, and concludes nothing."

func (inv *inventory) spdx() *SPDXDocument {
	p := inv.p
	doc := &SPDXDocument{
		SPDXVersion:       SPDXVersion,
		DataLicense:       SPDXDataLicense,
		SPDXID:            SPDXDocumentID,
		Name:              p.Binary + " " + p.Version,
		DocumentNamespace: inv.namespace,
		CreationInfo: SPDXCreationInfo{
			Created:  p.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: holdfast-" + p.Revision, "Organization: holdfast"},
			Comment:  spdxLicenseComment,
		},
	}
	var contains []SPDXRelationship
	for _, f := range inv.bins {
		doc.Packages = append(doc.Packages, SPDXPackage{
			Name:             p.Binary,
			SPDXID:           f.id,
			VersionInfo:      p.Version,
			DownloadLocation: noAssertion,
			Checksums:        []SPDXChecksum{{Algorithm: "SHA256", ChecksumValue: f.sha256}},
			// licenseConcluded stays NOASSERTION here and below: SPDX
			// means it for the licence the SBOM's author concludes from
			// the package's content, and holdfast reads licence files
			// only (and patches the main module), so it concludes
			// nothing; licenseDeclared is what those files say.
			LicenseConcluded:      noAssertion,
			LicenseDeclared:       spdxLicense(f.main.license),
			CopyrightText:         noAssertion,
			PrimaryPackagePurpose: "APPLICATION",
			Comment:               licenseComment(f.comment(p), binaryLicense(f.main.license)),
		})
		doc.Relationships = append(doc.Relationships, SPDXRelationship{SPDXDocumentID, "DESCRIBES", f.id})
		for _, m := range f.modules {
			// CONTAINS rather than DEPENDS_ON: a static Go binary holds
			// the modules' code, there is nothing to resolve at run time.
			contains = append(contains, SPDXRelationship{f.id, "CONTAINS", m.id})
		}
	}
	for _, m := range inv.modules {
		pkg := SPDXPackage{
			Name:             m.path,
			SPDXID:           m.id,
			VersionInfo:      m.version,
			DownloadLocation: noAssertion,
			LicenseConcluded: noAssertion,
			LicenseDeclared:  spdxLicense(m.license),
			CopyrightText:    noAssertion,
			Comment:          licenseComment(m.comment, m.license),
		}
		if m.purl == "" {
			pkg.VersionInfo = noAssertion
		} else {
			pkg.PrimaryPackagePurpose = "LIBRARY"
			pkg.ExternalRefs = []SPDXExternalRef{{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: m.purl}}
		}
		doc.Packages = append(doc.Packages, pkg)
	}
	doc.Relationships = append(doc.Relationships, contains...)
	return doc
}

func spdxLicense(r modlicense.Result) string {
	if r.ID == "" {
		return noAssertion
	}
	return r.ID
}

// binaryLicense is the main module's licence as the binary's comment
// tells it: the main module's own package says the details.
func binaryLicense(main modlicense.Result) modlicense.Result {
	if main.ID == "" {
		return modlicense.Result{Note: "the main module's licence was not found"}
	}
	return modlicense.Result{ID: main.ID}
}

// comment is what the binary's package says of it.
func (f *binaryFacts) comment(p Provenance) string {
	return fmt.Sprintf("%s binary built by holdfast from %s %s with its patch series (%s); %s", f.platform(), p.UpstreamModule, p.UpstreamVersion, p.SeriesHash, buildSettings(f.info))
}
