package image

// The subset of SPDX 2.3's JSON shape holdfast writes
// (https://spdx.github.io/spdx-spec/v2.3/). A dozen fields do not justify a
// dependency: github.com/github/go-spdx covers license expressions only,
// and the full tools-golang model would bring its own tag-value and YAML
// stacks. Field names follow the spec's JSON schema exactly.

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
