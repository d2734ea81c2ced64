package pins

import (
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/mod/semver"
)

// FileName is the pin file's name at the repository root.
const FileName = "pins.txt"

// File is a parsed pin file.
type File struct {
	// Name is the path the file was read from, used in error messages.
	Name      string
	Upstreams []*Upstream
}

// Upstream is one upstream project and every version of it holdfast builds.
type Upstream struct {
	// Name is the short name used on the command line and for the
	// conventional folders overlay/<Name>, tests/<Name> and patches/<Name>.
	Name string
	// Module is the upstream Go module path.
	Module string
	// Carry lists the pkg/ libraries copied into the upstream tree.
	Carry []string
	// Build lists the packages to build, relative to the module root
	// ("." for the root package).
	Build []string
	// Binaries names the binary of a Build package, where the pin file
	// says (`build ./cmd/x=name`); see BinaryName.
	Binaries map[string]string
	// Version says which package variables the build step sets with
	// -ldflags -X; nil sets none.
	Version *VersionVars
	Pins    []Pin
	// Line is where the upstream directive is in the pin file.
	Line int
}

// Pin is one pinned upstream version.
type Pin struct {
	Version string
	// Sum is the h1: hash of the module as the checksum database gives it.
	Sum string
	// Series is the patch series folder, relative to the repository root.
	Series string
	// Revision is holdfast's own release number on top of Version; the
	// patched binaries report Version-holdfast.Revision.
	Revision int
	// Tags are the build tags upstream's own release build passes for this
	// version (Karmada 1.17 and 1.18: kubernetes_protomessage_one_more_release,
	// hack/build.sh), comma-separated as -tags takes them, given to every
	// go build and go test of its trees. A string keeps Pin comparable.
	Tags    string
	Default bool
	// Line is where the pin is in the pin file (0 for a pin not read from one).
	Line int
}

// VersionVars are the string variables of an upstream's version package
// that the build step sets, and what each receives.
type VersionVars struct {
	// Package is the version package, relative to the module root
	// ("pkg/version").
	Package string
	Vars    []VersionVar
}

// VersionVar is one variable and the provenance field it receives.
type VersionVar struct {
	Name  string
	Field VersionField
}

// VersionField is a piece of build provenance a version variable can hold.
type VersionField string

// The fields mirror what Kubernetes-style version packages (Karmada's
// hack/util.sh util::version_ldflags) record, with holdfast's meaning.
const (
	// FieldVersion is the pin's VersionString, e.g. v1.18.2-holdfast.1.
	FieldVersion VersionField = "version"
	// FieldCommit is "holdfast:<commit>,series:<hash12>": the upstream
	// commit is already named by the version, so this slot says which
	// holdfast commit and which exact patch series built the binary.
	FieldCommit VersionField = "commit"
	// FieldShortCommit is holdfast's abbreviated commit.
	FieldShortCommit VersionField = "short-commit"
	// FieldTreeState is "clean" or "dirty": whether holdfast's checkout
	// had uncommitted changes.
	FieldTreeState VersionField = "tree-state"
	// FieldBuildDate is SOURCE_DATE_EPOCH, else holdfast's commit time,
	// in RFC 3339 UTC, so the same inputs build the same binary.
	FieldBuildDate VersionField = "build-date"
	// FieldSeriesHash is the series hash alone.
	FieldSeriesHash VersionField = "series-hash"
)

var versionFields = []VersionField{FieldVersion, FieldCommit, FieldShortCommit, FieldTreeState, FieldBuildDate, FieldSeriesHash}

// BinaryName is the file name the build step gives pkg's binary: the name
// given in the pin file, else the package's last path element, else (for
// ".") the module's.
func (u *Upstream) BinaryName(pkg string) string {
	if name, ok := u.Binaries[pkg]; ok {
		return name
	}
	if pkg == "." {
		return path.Base(u.Module)
	}
	return path.Base(pkg)
}

// Minor returns the major.minor of the pinned version, e.g. "v1.18".
func (p Pin) Minor() string { return semver.MajorMinor(p.Version) }

// Load reads and parses the pin file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading pin file: %w", err)
	}
	return Parse(path, data)
}

// Upstream returns the upstream called name.
func (f *File) Upstream(name string) (*Upstream, error) {
	for _, u := range f.Upstreams {
		if u.Named(name) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%s: no upstream %q (known: %s)", f.Name, name, f.names())
}

func (f *File) names() string {
	names := make([]string, len(f.Upstreams))
	for i, u := range f.Upstreams {
		names[i] = u.Name
	}
	return strings.Join(names, ", ")
}

// Pin returns the pin for version, or the default pin when version is empty.
func (u *Upstream) Pin(version string) (Pin, error) {
	for _, p := range u.Pins {
		if (version == "" && p.Default) || (version != "" && p.Version == version) {
			return p, nil
		}
	}
	if version == "" {
		return Pin{}, fmt.Errorf("upstream %s has no default pin", u.Name)
	}
	return Pin{}, fmt.Errorf("upstream %s has no pin for %s (pinned: %s); `holdfast rebase` tries an unpinned version", u.Name, version, u.versions())
}

func (u *Upstream) versions() string {
	versions := make([]string, len(u.Pins))
	for i, p := range u.Pins {
		versions[i] = p.Version
	}
	return strings.Join(versions, ", ")
}

// VersionString is the version the patched binaries report, in the form
// <upstream version>-holdfast.<revision>, so a running binary names both the
// upstream tag it was built from and holdfast's release on top of it.
func (p Pin) VersionString() string {
	return fmt.Sprintf("%s-holdfast.%d", p.Version, p.Revision)
}

// Named reports whether name names u: its name, or that name with hyphens
// ("worker-operator", as the chart, the image and the docs spell the
// upstream pins.txt calls workeroperator).
func (u *Upstream) Named(name string) bool {
	return name == u.Name || strings.ReplaceAll(name, "-", "") == u.Name
}
