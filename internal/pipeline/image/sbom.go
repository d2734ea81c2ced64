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

	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
)

// Binary is one platform's build of an image's binary.
type Binary struct {
	OS, Arch string
	// Path is the binary on disk.
	Path string
}

func (b Binary) platform() string { return b.OS + "/" + b.Arch }

// Licenses says which licence each module declares: a
// *modlicense.Finder over the module cache and GOROOT of the build that
// linked the binaries, or a test's stand-in.
type Licenses interface {
	Module(path, version string) modlicense.Result
	Stdlib(goVersion string) modlicense.Result
}

// SBOM is an image's bill of materials, one inventory in two formats.
type SBOM struct {
	// SPDX is the SPDX 2.3 JSON document.
	SPDX []byte
	// CycloneDX is the CycloneDX 1.6 JSON BOM.
	CycloneDX []byte
	// LicenseGaps are the modules whose licence the documents leave as
	// NOASSERTION (no CycloneDX licence), with why, in the documents'
	// order, for the caller to print.
	LicenseGaps []LicenseGap
}

// LicenseGap is a module whose licence was not found.
type LicenseGap struct {
	Module, Version, Why string
}

func (g LicenseGap) String() string { return g.Module + "@" + g.Version + ": " + g.Why }

// NewSBOM returns the SBOM of the binaries (one per platform) of an image:
// each binary, described by the documents, contains the Go modules and
// the standard library its embedded build information lists, each with
// the licence lic finds. The documents depend only on the binaries, p and
// lic's answers, so rebuilding the same binaries gives the same bytes.
func NewSBOM(p Provenance, bins []Binary, lic Licenses) (SBOM, error) {
	inv, err := newInventory(p, bins, lic)
	if err != nil {
		return SBOM{}, err
	}
	spdx, err := json.MarshalIndent(inv.spdx(), "", "  ")
	if err != nil {
		return SBOM{}, err
	}
	cdx, err := inv.cycloneDX()
	if err != nil {
		return SBOM{}, fmt.Errorf("SBOM of %s: CycloneDX: %w", p.Binary, err)
	}
	return SBOM{SPDX: append(spdx, '\n'), CycloneDX: cdx, LicenseGaps: inv.gaps}, nil
}

// binaryFacts is what the SBOM says of one binary.
type binaryFacts struct {
	Binary
	sha256 string
	info   *debug.BuildInfo
	// id is its SPDX identifier and CycloneDX bom-ref.
	id string
	// modules are the modules it contains, main the main module among
	// them, whose licence is the binary's.
	modules []*moduleFacts
	main    *moduleFacts
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

// inventory is what both documents say: the binaries, sorted by
// platform, and the modules they contain, each once, in the order the
// binaries list them.
type inventory struct {
	p Provenance
	// namespace is the SPDX document namespace, unique per set of
	// binaries; the CycloneDX serial number is derived from it.
	namespace string
	bins      []*binaryFacts
	modules   []*moduleFacts
	gaps      []LicenseGap
}

// moduleFacts is one module (or the standard library) of the inventory.
type moduleFacts struct {
	// id is its SPDX identifier, and its CycloneDX bom-ref.
	id, path, version, purl, comment string
	license                          modlicense.Result
	// main marks the main module: the upstream's, patched by holdfast.
	main bool
}

func newInventory(p Provenance, bins []Binary, lic Licenses) (*inventory, error) {
	if len(bins) == 0 {
		return nil, fmt.Errorf("SBOM of %s: no binary", p.Binary)
	}
	if lic == nil {
		return nil, fmt.Errorf("SBOM of %s: no licence finder", p.Binary)
	}
	inv := &inventory{p: p}
	for _, b := range bins {
		f, err := readBinary(b)
		if err != nil {
			return nil, err
		}
		inv.bins = append(inv.bins, f)
	}
	sort.Slice(inv.bins, func(i, j int) bool { return inv.bins[i].platform() < inv.bins[j].platform() })

	// The namespace must be unique per document; deriving it from the
	// binaries' digests keeps it so without making it depend on the clock.
	ns := sha256.New()
	for _, f := range inv.bins {
		fmt.Fprintf(ns, "%s %s\n", f.platform(), f.sha256)
	}
	inv.namespace = fmt.Sprintf("%s/spdx/%s/%s/%x", strings.TrimSuffix(p.Source, "/"), p.Binary, p.Version, ns.Sum(nil))

	ids := newIDs()
	modules := map[string]*moduleFacts{} // path@version -> module, shared by the binaries
	for _, f := range inv.bins {
		f.id = ids.make("Binary-" + p.Binary + "-" + f.OS + "-" + f.Arch)
		for _, m := range modulesOf(f.info, p, lic) {
			key := m.path + "@" + m.version
			if seen, ok := modules[key]; ok {
				m = seen
			} else {
				m.id = ids.make("Module-" + key)
				modules[key] = m
				inv.modules = append(inv.modules, m)
				if m.license.ID == "" {
					inv.gaps = append(inv.gaps, LicenseGap{m.path, m.version, m.license.Note})
				}
			}
			if m.main {
				f.main = m
			}
			f.modules = append(f.modules, m)
		}
	}
	return inv, nil
}

// modulesOf lists a binary's main module, the standard library and its
// dependencies (their replacements where go.mod replaces them: that is the
// code linked in), in that order, dependencies sorted by path.
func modulesOf(info *debug.BuildInfo, p Provenance, lic Licenses) []*moduleFacts {
	goVersion, _, _ := strings.Cut(info.GoVersion, " ")
	// The main module's folder is read from the module cache at the
	// pinned version: the pristine upstream module, whose licence holdfast's
	// patches leave as it is.
	// The version is the one the binary records (internal/pipeline/build: a
	// pseudo-version after the upstream tag), so that a scanner reading
	// the SBOM orders it as one reading the binary does; a binary built
	// without it ("(devel)") is named at the upstream tag.
	mainVersion := info.Main.Version
	if mainVersion == "" || mainVersion == "(devel)" {
		mainVersion = p.UpstreamVersion
	}
	mods := []*moduleFacts{
		newModule(info.Main.Path, mainVersion, lic.Module(info.Main.Path, p.UpstreamVersion),
			fmt.Sprintf("the main module: upstream %s with holdfast's patch series %s (%s)", p.UpstreamVersion, p.SeriesHash, p.Version)),
		// Scanners match Go vulnerabilities against "stdlib" at the
		// toolchain's version without the "go" prefix.
		newModule("stdlib", strings.TrimPrefix(goVersion, "go"), lic.Stdlib(goVersion), "the Go standard library and runtime, "+goVersion),
	}
	mods[0].main = true
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
		mods = append(mods, newModule(d.Path, d.Version, lic.Module(d.Path, d.Version), comment))
	}
	return mods
}

func newModule(path, version string, license modlicense.Result, comment string) *moduleFacts {
	m := &moduleFacts{path: path, version: version, license: license, comment: comment}
	if version != "" {
		// A replacement by a local folder has no version to look up.
		m.purl = "pkg:golang/" + purlEscapePath(path) + "@" + purlEscape(version)
	}
	return m
}

// licenseComment is the comment of a package, with what qualifies its
// licence or why it has none.
func licenseComment(comment string, license modlicense.Result) string {
	note := license.Note
	if license.ID == "" {
		note = "licenseDeclared NOASSERTION: " + note
	}
	switch {
	case note == "":
		return comment
	case comment == "":
		return note
	}
	return comment + "; " + note
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
