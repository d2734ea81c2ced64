package image_test

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/github/go-spdx/v2/spdxexp"
	"github.com/google/go-cmp/cmp"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdxlib"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense/modlicensetest"
)

var spdxID = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)

// validateSPDX reads the document with the SPDX project's own Go tools
// (tools-golang's JSON reader into its SPDX 2.3 model, and its
// validation), checks that the reader kept every field written (a
// misspelt field would be dropped silently), that every licence is NONE,
// NOASSERTION or a valid SPDX expression (go-spdx), and the rules of SPDX
// 2.3 tools-golang leaves out for the fields holdfast writes: namespace,
// creation time and creators, identifiers, checksums, package URLs.
func validateSPDX(t *testing.T, raw []byte) *spdx.Document {
	t.Helper()
	doc, err := spdxjson.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("tools-golang cannot read the SBOM: %v", err)
	}
	if err := spdxlib.ValidateDocument(doc); err != nil {
		t.Errorf("tools-golang: %v", err)
	}
	if described, err := spdxlib.GetDescribedPackageIDs(doc); err != nil || len(described) == 0 {
		t.Errorf("the document describes nothing: %v %v", described, err)
	}
	var rewritten bytes.Buffer
	if err := spdxjson.Write(doc, &rewritten); err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rewritten.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools-golang's SPDX 2.3 model does not hold the document as written (-written +read and rewritten):\n%s", diff)
	}

	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || doc.SPDXIdentifier != "DOCUMENT" || doc.DocumentName == "" {
		t.Errorf("document header: %q %q %q %q", doc.SPDXVersion, doc.DataLicense, doc.SPDXIdentifier, doc.DocumentName)
	}
	if u, err := url.Parse(doc.DocumentNamespace); err != nil || !u.IsAbs() || strings.Contains(doc.DocumentNamespace, "#") {
		t.Errorf("documentNamespace %q is not an absolute URI without #", doc.DocumentNamespace)
	}
	if _, err := time.Parse(time.RFC3339, doc.CreationInfo.Created); err != nil || !strings.HasSuffix(doc.CreationInfo.Created, "Z") {
		t.Errorf("created %q is not UTC RFC 3339", doc.CreationInfo.Created)
	}
	if len(doc.CreationInfo.Creators) == 0 {
		t.Error("no creator")
	}
	for _, c := range doc.CreationInfo.Creators {
		if !regexp.MustCompile(`^(Tool|Organization|Person)$`).MatchString(c.CreatorType) || c.Creator == "" {
			t.Errorf("creator %+v", c)
		}
	}
	ids := map[spdx.ElementID]bool{doc.SPDXIdentifier: true}
	for _, p := range doc.Packages {
		if p.PackageName == "" || p.PackageDownloadLocation == "" || p.PackageLicenseConcluded == "" || p.PackageLicenseDeclared == "" || p.PackageCopyrightText == "" {
			t.Errorf("package %+v lacks a required field", p)
		}
		if id := "SPDXRef-" + string(p.PackageSPDXIdentifier); !spdxID.MatchString(id) || ids[p.PackageSPDXIdentifier] {
			t.Errorf("package %s: SPDXID %q malformed or repeated", p.PackageName, id)
		}
		ids[p.PackageSPDXIdentifier] = true
		for _, l := range []string{p.PackageLicenseConcluded, p.PackageLicenseDeclared} {
			if l == "NOASSERTION" || l == "NONE" {
				continue
			}
			if ok, invalid := spdxexp.ValidateLicenses([]string{l}); !ok {
				t.Errorf("package %s: licence %q is not an SPDX expression: %v", p.PackageName, l, invalid)
			}
		}
		for _, c := range p.PackageChecksums {
			if c.Algorithm != spdx.SHA256 || len(c.Value) != 64 {
				t.Errorf("package %s: checksum %+v", p.PackageName, c)
			}
		}
		for _, r := range p.PackageExternalReferences {
			if r.Category != "PACKAGE-MANAGER" || r.RefType != "purl" || !strings.HasPrefix(r.Locator, "pkg:golang/") {
				t.Errorf("package %s: external ref %+v", p.PackageName, r)
			}
		}
	}
	return doc
}

// sbomPackages indexes a document's packages by SPDX identifier and by
// name@version, and counts how many binaries contain each.
type sbomPackages struct {
	byID     map[spdx.ElementID]*spdx.Package
	byName   map[string]*spdx.Package
	contains map[string]int
	// described are the binaries' packages by platform (their comment's
	// first word).
	described map[string]*spdx.Package
}

func indexSPDX(doc *spdx.Document) sbomPackages {
	s := sbomPackages{byID: map[spdx.ElementID]*spdx.Package{}, byName: map[string]*spdx.Package{}, contains: map[string]int{}, described: map[string]*spdx.Package{}}
	for _, p := range doc.Packages {
		s.byID[p.PackageSPDXIdentifier] = p
		s.byName[p.PackageName+"@"+p.PackageVersion] = p
	}
	for _, r := range doc.Relationships {
		p := s.byID[r.RefB.ElementRefID]
		switch r.Relationship {
		case "CONTAINS":
			s.contains[p.PackageName+"@"+p.PackageVersion]++
		case "DESCRIBES":
			s.described[strings.Fields(p.PackageComment)[0]] = p
		}
	}
	return s
}

func TestSBOM(t *testing.T) {
	in := input(t)
	sbom, err := image.NewSBOM(in.Provenance, in.Binaries, in.Licenses)
	if err != nil {
		t.Fatal(err)
	}
	doc := validateSPDX(t, sbom.SPDX)
	if doc.DocumentName != "hello v1.2.0-holdfast.3" || doc.CreationInfo.Created != "2026-12-02T10:48:45Z" {
		t.Errorf("name %q created %q", doc.DocumentName, doc.CreationInfo.Created)
	}
	if !strings.Contains(doc.CreationInfo.CreatorComment, "go-license-detector") {
		t.Errorf("the creation comment does not say where licences come from: %q", doc.CreationInfo.CreatorComment)
	}
	pkgs := indexSPDX(doc)

	// One described package per binary, with the file's digest and the
	// main module's licence.
	for arch, path := range testdataBinaries {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		p := pkgs.described["linux/"+arch]
		if p == nil {
			t.Errorf("no described package for linux/%s", arch)
			continue
		}
		if p.PackageName != "hello" || p.PackageVersion != "v1.2.0-holdfast.3" || p.PrimaryPackagePurpose != "APPLICATION" ||
			len(p.PackageChecksums) != 1 || p.PackageChecksums[0].Value != hex.EncodeToString(sum[:]) {
			t.Errorf("linux/%s binary package %+v, want checksum %x", arch, p, sum)
		}
		if p.PackageLicenseDeclared != "Apache-2.0" || p.PackageLicenseConcluded != "NOASSERTION" {
			t.Errorf("linux/%s binary: licences declared %q concluded %q, want the main module's Apache-2.0 and NOASSERTION", arch, p.PackageLicenseDeclared, p.PackageLicenseConcluded)
		}
	}

	// Every module the binary's build information lists, at its version,
	// contained by each binary; plus the main module and the standard
	// library, each with the licence of its folder in the made-up module
	// cache (helpers_test.go), read by the real detector.
	info, err := buildinfo.ReadFile(testdataBinaries["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	goVersion := strings.TrimPrefix(strings.Fields(info.GoVersion)[0], "go")
	// The main module is holdfast's here (testdata/hello is in it); in a
	// real image it is the upstream's, at the pinned version.
	licenses := map[string]string{info.Main.Path + "@v1.2.0": "Apache-2.0", "stdlib@" + goVersion: "BSD-3-Clause"}
	for _, d := range info.Deps {
		licenses[d.Path+"@"+d.Version] = "BSD-3-Clause"
	}
	if !strings.Contains(strings.Join(mapKeys(licenses), " "), "golang.org/x/mod@v") {
		t.Fatalf("testdata/hello no longer links golang.org/x/mod: %v", licenses)
	}
	for m, license := range licenses {
		p, ok := pkgs.byName[m]
		if !ok {
			t.Errorf("module %s missing from the SBOM", m)
			continue
		}
		if pkgs.contains[m] != 2 {
			t.Errorf("module %s is contained by %d binaries, want both", m, pkgs.contains[m])
		}
		name, version, _ := strings.Cut(m, "@")
		if loc := p.PackageExternalReferences[0].Locator; loc != "pkg:golang/"+name+"@"+version {
			t.Errorf("module %s: purl %s", m, loc)
		}
		if p.PackageLicenseDeclared != license || p.PackageLicenseConcluded != "NOASSERTION" {
			t.Errorf("module %s: licences declared %q concluded %q, want %s and NOASSERTION", m, p.PackageLicenseDeclared, p.PackageLicenseConcluded, license)
		}
		if license == "BSD-3-Clause" && !strings.Contains(p.PackageComment, "the Go project's licence") {
			t.Errorf("module %s: comment %q does not say the Go licence was recognised by its digest", m, p.PackageComment)
		}
	}
	if len(pkgs.byName) != len(licenses)+1 { // + the binary
		t.Errorf("%d distinct packages, want %d: %v", len(pkgs.byName), len(licenses)+1, mapKeys(pkgs.byName))
	}
	if main := pkgs.byName[info.Main.Path+"@v1.2.0"]; !strings.Contains(main.PackageComment, in.Provenance.SeriesHash) {
		t.Errorf("main module comment %q does not name the series", main.PackageComment)
	}
	if len(sbom.LicenseGaps) != 0 {
		t.Errorf("licence gaps %v, want none", sbom.LicenseGaps)
	}

	again, err := image.NewSBOM(in.Provenance, []image.Binary{in.Binaries[1], in.Binaries[0]}, in.Licenses)
	if err != nil || string(again.SPDX) != string(sbom.SPDX) || string(again.CycloneDX) != string(sbom.CycloneDX) {
		t.Errorf("the same binaries in another order give other SBOMs (%v)", err)
	}
	one, err := image.NewSBOM(in.Provenance, in.Binaries[:1], in.Licenses)
	if err != nil {
		t.Fatal(err)
	}
	if validateSPDX(t, one.SPDX).DocumentNamespace == doc.DocumentNamespace {
		t.Error("documents of different binaries share a namespace")
	}
	for _, forbidden := range []string{in.Tree, os.TempDir()} {
		if strings.Contains(string(sbom.SPDX), forbidden) || strings.Contains(string(sbom.CycloneDX), forbidden) {
			t.Errorf("an SBOM holds the build path %s", forbidden)
		}
	}
}

// TestSBOMLicenseGaps runs the SBOM over a module cache that lacks the
// main module and holds golang.org/x/mod without a licence file: both stay
// NOASSERTION with why, the binaries too, the documents stay valid, and
// the gaps are returned.
func TestSBOMLicenseGaps(t *testing.T) {
	in := input(t)
	info, err := buildinfo.ReadFile(testdataBinaries["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	var xmod string
	var mods []modlicensetest.Module
	for _, d := range info.Deps {
		if d.Path == "golang.org/x/mod" {
			xmod = d.Version
			mods = append(mods, modlicensetest.Module{Path: d.Path, Version: d.Version}) // no LICENSE
		}
	}
	goVersion, _, _ := strings.Cut(info.GoVersion, " ")
	modCache, goroot, err := modlicensetest.WriteGo(t.TempDir(), goVersion, mods...)
	if err != nil {
		t.Fatal(err)
	}
	lic, err := modlicense.New(modCache, goroot, modlicense.CycloneDX())
	if err != nil {
		t.Fatal(err)
	}
	sbom, err := image.NewSBOM(in.Provenance, in.Binaries, lic)
	if err != nil {
		t.Fatal(err)
	}
	want := []image.LicenseGap{
		{Module: info.Main.Path, Version: "v1.2.0", Why: "not in the module cache"},
		{Module: "golang.org/x/mod", Version: xmod, Why: "no licence detected: no licence file, or none matched with enough confidence"},
	}
	if !reflect.DeepEqual(sbom.LicenseGaps, want) {
		t.Errorf("licence gaps\n%v\nwant\n%v", sbom.LicenseGaps, want)
	}

	pkgs := indexSPDX(validateSPDX(t, sbom.SPDX))
	for m, comment := range map[string]string{
		info.Main.Path + "@v1.2.0": "licenseDeclared NOASSERTION: not in the module cache",
		"golang.org/x/mod@" + xmod: "licenseDeclared NOASSERTION: no licence detected",
		"stdlib@" + goVersion[2:]:  "", // still found, in GOROOT
		"hello@v1.2.0-holdfast.3":  "licenseDeclared NOASSERTION: the main module's licence was not found",
	} {
		p := pkgs.byName[m]
		switch {
		case p == nil:
			t.Errorf("no package %s", m)
		case comment == "" && p.PackageLicenseDeclared != "BSD-3-Clause":
			t.Errorf("%s: licenseDeclared %q, want BSD-3-Clause", m, p.PackageLicenseDeclared)
		case comment != "" && (p.PackageLicenseDeclared != "NOASSERTION" || !strings.Contains(p.PackageComment, comment)):
			t.Errorf("%s: licenseDeclared %q, comment %q, want NOASSERTION and %q", m, p.PackageLicenseDeclared, p.PackageComment, comment)
		}
	}

	bom := decodeCycloneDX(t, sbom.CycloneDX)
	for _, c := range *bom.Components {
		if licensed := c.Licenses != nil; licensed != (c.Name == "stdlib") {
			t.Errorf("CycloneDX component %s@%s: licences %+v, want only the standard library's", c.Name, c.Version, c.Licenses)
		}
	}
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
