package image_test

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/image"
)

var spdxID = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)

// validateSPDX checks the document against SPDX 2.3's rules for the fields
// holdfast writes: required fields present, identifiers well-formed and
// unique, every relationship between existing elements.
func validateSPDX(t *testing.T, raw []byte) *image.SPDXDocument {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var doc image.SPDXDocument
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("SBOM is not the expected JSON: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || doc.SPDXID != "SPDXRef-DOCUMENT" || doc.Name == "" {
		t.Errorf("document header: %q %q %q %q", doc.SPDXVersion, doc.DataLicense, doc.SPDXID, doc.Name)
	}
	if u, err := url.Parse(doc.DocumentNamespace); err != nil || !u.IsAbs() || strings.Contains(doc.DocumentNamespace, "#") {
		t.Errorf("documentNamespace %q is not an absolute URI without #", doc.DocumentNamespace)
	}
	if _, err := time.Parse(time.RFC3339, doc.CreationInfo.Created); err != nil || !strings.HasSuffix(doc.CreationInfo.Created, "Z") {
		t.Errorf("created %q is not UTC RFC 3339", doc.CreationInfo.Created)
	}
	creator := regexp.MustCompile(`^(Tool|Organization|Person): \S`)
	if len(doc.CreationInfo.Creators) == 0 {
		t.Error("no creator")
	}
	for _, c := range doc.CreationInfo.Creators {
		if !creator.MatchString(c) {
			t.Errorf("creator %q", c)
		}
	}
	ids := map[string]bool{doc.SPDXID: true}
	for _, p := range doc.Packages {
		if p.Name == "" || p.DownloadLocation == "" || p.LicenseConcluded == "" || p.LicenseDeclared == "" || p.CopyrightText == "" {
			t.Errorf("package %+v lacks a required field", p)
		}
		if !spdxID.MatchString(p.SPDXID) || ids[p.SPDXID] {
			t.Errorf("package %s: SPDXID %q malformed or repeated", p.Name, p.SPDXID)
		}
		ids[p.SPDXID] = true
		for _, c := range p.Checksums {
			if c.Algorithm != "SHA256" || len(c.ChecksumValue) != 64 {
				t.Errorf("package %s: checksum %+v", p.Name, c)
			}
		}
		for _, r := range p.ExternalRefs {
			if r.ReferenceCategory != "PACKAGE-MANAGER" || r.ReferenceType != "purl" || !strings.HasPrefix(r.ReferenceLocator, "pkg:golang/") {
				t.Errorf("package %s: external ref %+v", p.Name, r)
			}
		}
	}
	describes := 0
	for _, r := range doc.Relationships {
		if !ids[r.SPDXElementID] || !ids[r.RelatedSPDXElement] {
			t.Errorf("relationship %+v names an element the document lacks", r)
		}
		if r.RelationshipType == "DESCRIBES" && r.SPDXElementID == doc.SPDXID {
			describes++
		}
	}
	if describes == 0 {
		t.Error("the document describes nothing")
	}
	return &doc
}

func TestSBOM(t *testing.T) {
	in := input(t)
	raw, err := image.SBOM(in.Provenance, in.Binaries)
	if err != nil {
		t.Fatal(err)
	}
	doc := validateSPDX(t, raw)
	if doc.Name != "hello v1.2.0-holdfast.3" || doc.CreationInfo.Created != "2026-12-02T10:48:45Z" {
		t.Errorf("name %q created %q", doc.Name, doc.CreationInfo.Created)
	}
	byID := map[string]image.SPDXPackage{}
	byName := map[string]image.SPDXPackage{}
	for _, p := range doc.Packages {
		byID[p.SPDXID] = p
		byName[p.Name+"@"+p.VersionInfo] = p
	}

	// One described package per binary, with the file's digest.
	described := map[string]string{}
	for _, r := range doc.Relationships {
		if r.RelationshipType == "DESCRIBES" {
			p := byID[r.RelatedSPDXElement]
			described[p.Comment[:strings.Index(p.Comment, " ")]] = p.Checksums[0].ChecksumValue
			if p.Name != "hello" || p.VersionInfo != "v1.2.0-holdfast.3" || p.PrimaryPackagePurpose != "APPLICATION" {
				t.Errorf("binary package %+v", p)
			}
		}
	}
	for arch, path := range testdataBinaries {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := described["linux/"+arch]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("linux/%s binary: checksum %q, want the file's %x", arch, got, sum)
		}
	}

	// Every module the binary's build information lists, at its version,
	// contained by each binary; plus the main module and the standard
	// library.
	info, err := buildinfo.ReadFile(testdataBinaries["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	goVersion := strings.TrimPrefix(strings.Fields(info.GoVersion)[0], "go")
	// The main module is holdfast's here (testdata/hello is in it); in a
	// real image it is the upstream's, at the pinned version.
	want := []string{info.Main.Path + "@v1.2.0", "stdlib@" + goVersion}
	for _, d := range info.Deps {
		want = append(want, d.Path+"@"+d.Version)
	}
	if !strings.Contains(strings.Join(want, " "), "golang.org/x/mod@v") {
		t.Fatalf("testdata/hello no longer links golang.org/x/mod: %v", want)
	}
	contains := map[string]int{}
	for _, r := range doc.Relationships {
		if r.RelationshipType == "CONTAINS" {
			p := byID[r.RelatedSPDXElement]
			contains[p.Name+"@"+p.VersionInfo]++
		}
	}
	for _, m := range want {
		p, ok := byName[m]
		if !ok {
			t.Errorf("module %s missing from the SBOM", m)
			continue
		}
		if contains[m] != 2 {
			t.Errorf("module %s is contained by %d binaries, want both", m, contains[m])
		}
		name, version, _ := strings.Cut(m, "@")
		if loc := p.ExternalRefs[0].ReferenceLocator; loc != "pkg:golang/"+name+"@"+version {
			t.Errorf("module %s: purl %s", m, loc)
		}
	}
	if len(byName) != len(want)+1 { // + the binary
		t.Errorf("%d distinct packages, want %d: %v", len(byName), len(want)+1, byName)
	}
	if main := byName[info.Main.Path+"@v1.2.0"]; !strings.Contains(main.Comment, in.Provenance.SeriesHash) {
		t.Errorf("main module comment %q does not name the series", main.Comment)
	}

	again, _ := image.SBOM(in.Provenance, []image.Binary{in.Binaries[1], in.Binaries[0]})
	if string(again) != string(raw) {
		t.Error("the same binaries in another order give another SBOM")
	}
	one, _ := image.SBOM(in.Provenance, in.Binaries[:1])
	if validateSPDX(t, one).DocumentNamespace == doc.DocumentNamespace {
		t.Error("documents of different binaries share a namespace")
	}
	for _, forbidden := range []string{in.Tree, os.TempDir()} {
		if strings.Contains(string(raw), forbidden) {
			t.Errorf("SBOM holds the build path %s", forbidden)
		}
	}
}
