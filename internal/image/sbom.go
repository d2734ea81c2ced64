package image

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// Binary is one platform's build of an image's binary.
type Binary struct {
	OS, Arch string
	// Path is the binary on disk.
	Path string
}

func (b Binary) platform() string { return b.OS + "/" + b.Arch }

// SBOM returns the SPDX 2.3 JSON document of the binaries (one per
// platform) of an image: each binary, described by the document, contains
// the Go modules and the standard library its embedded build information
// lists. The document depends only on the binaries and p, so rebuilding
// the same binaries gives the same bytes.
func SBOM(p Provenance, bins []Binary) ([]byte, error) {
	doc, err := sbomDocument(p, bins)
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// binaryFacts is what the SBOM needs from one binary.
type binaryFacts struct {
	Binary
	sha256 string
	info   *debug.BuildInfo
}

func readBinary(b Binary) (*binaryFacts, error) {
	f, err := os.Open(b.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Path, err)
	}
	info, err := buildinfo.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: reading its Go build information: %w", b.Path, err)
	}
	goos, goarch := setting(info, "GOOS"), setting(info, "GOARCH")
	if goos != b.OS || goarch != b.Arch {
		return nil, fmt.Errorf("%s is built for %s/%s, not %s", b.Path, goos, goarch, b.platform())
	}
	return &binaryFacts{Binary: b, sha256: hex.EncodeToString(h.Sum(nil)), info: info}, nil
}

func setting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func sbomDocument(p Provenance, bins []Binary) (*SPDXDocument, error) {
	if len(bins) == 0 {
		return nil, fmt.Errorf("SBOM of %s: no binary", p.Binary)
	}
	var facts []*binaryFacts
	for _, b := range bins {
		f, err := readBinary(b)
		if err != nil {
			return nil, err
		}
		facts = append(facts, f)
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].platform() < facts[j].platform() })

	ids := newIDs()
	doc := &SPDXDocument{
		SPDXVersion: SPDXVersion,
		DataLicense: SPDXDataLicense,
		SPDXID:      SPDXDocumentID,
		Name:        p.Binary + " " + p.Version,
		CreationInfo: SPDXCreationInfo{
			Created:  p.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: holdfast-" + p.Revision, "Organization: holdfast"},
		},
	}
	// The namespace must be unique per document; deriving it from the
	// binaries' digests keeps it so without making it depend on the clock.
	ns := sha256.New()
	for _, f := range facts {
		fmt.Fprintf(ns, "%s %s\n", f.platform(), f.sha256)
	}
	doc.DocumentNamespace = fmt.Sprintf("%s/spdx/%s/%s/%x", strings.TrimSuffix(p.Source, "/"), p.Binary, p.Version, ns.Sum(nil))

	modules := map[string]string{} // module key -> SPDXID, shared by the binaries
	var modulePkgs []SPDXPackage
	var contains []SPDXRelationship
	for _, f := range facts {
		id := ids.make("Binary-" + p.Binary + "-" + f.OS + "-" + f.Arch)
		doc.Packages = append(doc.Packages, SPDXPackage{
			Name:                  p.Binary,
			SPDXID:                id,
			VersionInfo:           p.Version,
			DownloadLocation:      noAssertion,
			Checksums:             []SPDXChecksum{{Algorithm: "SHA256", ChecksumValue: f.sha256}},
			LicenseConcluded:      noAssertion,
			LicenseDeclared:       noAssertion,
			CopyrightText:         noAssertion,
			PrimaryPackagePurpose: "APPLICATION",
			Comment:               fmt.Sprintf("%s binary built by holdfast from %s %s with its patch series (%s); %s", f.platform(), p.UpstreamModule, p.UpstreamVersion, p.SeriesHash, buildSettings(f.info)),
		})
		doc.Relationships = append(doc.Relationships, SPDXRelationship{SPDXDocumentID, "DESCRIBES", id})
		for _, m := range modulesOf(f.info, p) {
			key := m.Name + "@" + m.VersionInfo
			mid, ok := modules[key]
			if !ok {
				mid = ids.make("Module-" + key)
				modules[key] = mid
				m.SPDXID = mid
				modulePkgs = append(modulePkgs, m)
			}
			// CONTAINS rather than DEPENDS_ON: a static Go binary holds
			// the modules' code, there is nothing to resolve at run time.
			contains = append(contains, SPDXRelationship{id, "CONTAINS", mid})
		}
	}
	doc.Packages = append(doc.Packages, modulePkgs...)
	doc.Relationships = append(doc.Relationships, contains...)
	return doc, nil
}

// modulesOf lists a binary's main module, the standard library and its
// dependencies (their replacements where go.mod replaces them: that is the
// code linked in), in that order, dependencies sorted by path.
func modulesOf(info *debug.BuildInfo, p Provenance) []SPDXPackage {
	goVersion, _, _ := strings.Cut(info.GoVersion, " ")
	pkgs := []SPDXPackage{
		modulePackage(info.Main.Path, p.UpstreamVersion,
			fmt.Sprintf("the main module: upstream %s with holdfast's patch series %s (%s)", p.UpstreamVersion, p.SeriesHash, p.Version)),
		// Scanners match Go vulnerabilities against "stdlib" at the
		// toolchain's version without the "go" prefix.
		modulePackage("stdlib", strings.TrimPrefix(goVersion, "go"), "the Go standard library and runtime, "+goVersion),
	}
	deps := append([]*debug.Module(nil), info.Deps...)
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	for _, d := range deps {
		comment := ""
		if d.Sum != "" {
			comment = "go.sum " + d.Sum
		}
		if d.Replace != nil {
			comment = fmt.Sprintf("%s %s replaced by %s %s", d.Path, d.Version, d.Replace.Path, d.Replace.Version)
			if d.Replace.Sum != "" {
				comment += ", go.sum " + d.Replace.Sum
			}
			d = d.Replace
		}
		pkgs = append(pkgs, modulePackage(d.Path, d.Version, comment))
	}
	return pkgs
}

func modulePackage(path, version, comment string) SPDXPackage {
	pkg := SPDXPackage{
		Name:             path,
		VersionInfo:      version,
		DownloadLocation: noAssertion,
		LicenseConcluded: noAssertion,
		LicenseDeclared:  noAssertion,
		CopyrightText:    noAssertion,
		Comment:          comment,
	}
	if version == "" {
		// A replacement by a local folder has no version to look up.
		pkg.VersionInfo = noAssertion
		return pkg
	}
	pkg.PrimaryPackagePurpose = "LIBRARY"
	pkg.ExternalRefs = []SPDXExternalRef{{
		ReferenceCategory: "PACKAGE-MANAGER",
		ReferenceType:     "purl",
		ReferenceLocator:  "pkg:golang/" + purlEscapePath(path) + "@" + purlEscape(version),
	}}
	return pkg
}

// buildSettings are the go command's settings the binary records
// (-trimpath, -ldflags, CGO_ENABLED, GOOS, GOARCH...), sorted.
func buildSettings(info *debug.BuildInfo) string {
	var s []string
	for _, kv := range info.Settings {
		s = append(s, kv.Key+"="+kv.Value)
	}
	sort.Strings(s)
	return "built with " + info.GoVersion + ": " + strings.Join(s, " ")
}

// purlEscape percent-encodes what a package URL segment may not hold
// unencoded (a version's "+incompatible", for one).
func purlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func purlEscapePath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = purlEscape(s)
	}
	return strings.Join(segs, "/")
}

// ids hands out unique SPDX identifiers: SPDXRef- and letters, digits,
// "." and "-" only.
type ids map[string]bool

func newIDs() ids { return ids{SPDXDocumentID: true} }

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

func (seen ids) make(name string) string {
	base := "SPDXRef-" + strings.Trim(idUnsafe.ReplaceAllString(name, "-"), "-")
	id := base
	for n := 2; seen[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	seen[id] = true
	return id
}
