package release

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Shipped is one upstream release the release carries: the default pin of
// an upstream and the series applied to it.
type Shipped struct {
	Upstream *pins.Upstream
	Pin      pins.Pin
	Series   []*patchset.Patch
	// SeriesHash is the h1: hash the binaries were stamped with.
	SeriesHash string
	// Overrides are the series' dependency overrides
	// (internal/pipeline/overrides), Waivers the advisories its overrides file
	// excuses from the gate.
	Overrides []overrides.Entry
	GoLine    *overrides.GoLine
	Waivers   []overrides.Waiver
}

// LoadShipped reads the default pin of every upstream in the pin file and
// its series from root.
func LoadShipped(root string, f *pins.File) ([]Shipped, error) {
	var out []Shipped
	for _, up := range f.Upstreams {
		pin, err := up.Pin("")
		if err != nil {
			return nil, err
		}
		// The series hash as the build computes it (series, overlay and
		// carried libraries): the binaries must carry exactly this one.
		in, err := pipeline.Config{Root: root}.LoadInputs(up, pin.Series)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", up.Name, pin.Version, err)
		}
		out = append(out, Shipped{Upstream: up, Pin: pin, Series: in.Series, SeriesHash: in.SeriesHash, Overrides: in.Overrides, GoLine: in.GoLine, Waivers: in.Waivers})
	}
	return out, nil
}

// Notes is what the release notes say beyond the series.
type Notes struct {
	Version string
	Source  build.Source
	Shipped []Shipped
	// Artifacts are the release's files by kind ("images", "charts", ...),
	// relative to the release folder, each with a one-line description.
	Artifacts []Artifact
	// Images are the digests of every image, read from the OCI layouts the
	// release ships.
	Images []imagebuild.Digests
	// E2E is the end-to-end summary table (Markdown), if any.
	E2E string
	// Verifying is the section on signatures and provenance (Markdown).
	Verifying string
	// Vulnerabilities is the vulnerability report's summary (Markdown).
	Vulnerabilities string
}

// Artifact is one file or folder of the release.
type Artifact struct {
	Kind, Path, Description string
}

// Markdown renders the release notes.
func (n Notes) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# holdfast %s\n\n", n.Version)
	fmt.Fprintf(&b, "Built from holdfast commit `%s` (%s). Verify every file with `sha256sum -c CHECKSUMS` in this folder.\n\n",
		n.Source.Commit, n.Source.Date.UTC().Format("2006-01-02T15:04:05Z"))
	b.WriteString("## Upstream releases\n\n| upstream | module | version | holdfast version | series |\n|---|---|---|---|---|\n")
	for _, s := range n.Shipped {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | `%s` (%d patches) |\n", s.Upstream.Name, s.Upstream.Module,
			s.Pin.Version, s.Pin.VersionString(), s.Pin.Series, len(s.Series))
	}
	b.WriteString("\n## Carried patches\n\n")
	b.WriteString("Every patch below is applied with zero fuzz to the upstream release named above. " +
		"\"Upstream status\" is the first upstream tag with the change and any merged backport; " +
		"\"Drop when\" is the condition under which a rebase removes the patch.\n")
	for _, s := range n.Shipped {
		fmt.Fprintf(&b, "\n### %s %s\n\n", s.Upstream.Name, s.Pin.Version)
		b.WriteString("| patch | what it changes | fix | upstream issue | upstream PR | upstream status | drop when |\n|---|---|---|---|---|---|---|\n")
		for _, p := range s.Series {
			h := p.Header
			status := h.AppliedUpstream
			if status == "" || strings.EqualFold(status, "no") {
				status = "not upstream"
			} else {
				status = "in " + status
			}
			if h.UpstreamBackport != "" {
				status += "; backport: " + h.UpstreamBackport
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", p.Name(), cell(h.Subject), cell(h.HoldfastFix),
				cell(h.UpstreamIssue), cell(h.UpstreamPR), cell(status), cell(h.DropWhen))
		}
	}
	overridden := false
	for _, s := range n.Shipped {
		overridden = overridden || len(s.Overrides) > 0
	}
	if overridden {
		b.WriteString("\n## Dependency overrides\n\n")
		b.WriteString("Requirements raised in the patched tree with the go command (checksum database consulted) " +
			"to versions that fix the advisories named. Where a fixed version needs a newer go line, the series raises it " +
			"and go.mod gets `godebug default=go<upstream's line>`, so the binaries keep upstream's GODEBUG defaults. " +
			"\"Drop when\" is the upstream requirement from which a rebase removes the entry.\n")
		for _, s := range n.Shipped {
			if len(s.Overrides) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n### %s %s\n\n", s.Upstream.Name, s.Pin.Version)
			if s.GoLine != nil {
				fmt.Fprintf(&b, "go line raised to %s, upstream's GODEBUG defaults kept: %s\n\n", s.GoLine.Version, cell(s.GoLine.Why))
			}
			b.WriteString("| module | version | fixes | drop when | why this version |\n|---|---|---|---|---|\n")
			for _, e := range s.Overrides {
				fmt.Fprintf(&b, "| `%s` | %s | %s | upstream requires >= %s | %s |\n", e.Module, e.Version,
					strings.Join(e.Fixes, " "), e.DropWhen, cell(e.Why))
			}
		}
	}
	if len(n.Artifacts) > 0 {
		b.WriteString("\n## Artifacts\n\n| kind | path | what |\n|---|---|---|\n")
		for _, a := range n.Artifacts {
			fmt.Fprintf(&b, "| %s | `%s` | %s |\n", a.Kind, a.Path, cell(a.Description))
		}
	}
	if len(n.Images) > 0 {
		b.WriteString("\n## Images\n\n")
		b.WriteString("Pull by digest to get exactly these builds: `REFERENCE@INDEX-DIGEST` (the tag without the digest also works). " +
			"The index digest covers every platform; a platform digest names one platform's image. " +
			"The packaged charts default to the index digests.\n\n")
		b.WriteString("| image | index digest | platform manifests |\n|---|---|---|\n")
		for _, d := range n.Images {
			var platforms []string
			for _, p := range d.Platforms {
				platforms = append(platforms, p.Platform+" `"+p.Digest.String()+"`")
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", d.Ref, d.Index, strings.Join(platforms, "<br>"))
		}
	}
	if n.Vulnerabilities != "" {
		b.WriteString("\n## Vulnerabilities\n\n")
		b.WriteString(strings.TrimSpace(n.Vulnerabilities))
		b.WriteString("\n")
	}
	if n.Verifying != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(n.Verifying))
		b.WriteString("\n")
	}
	if n.E2E != "" {
		b.WriteString("\n## End-to-end\n\n")
		b.WriteString(strings.TrimSpace(n.E2E))
		b.WriteString("\n")
	}
	return b.Bytes()
}

// Waiver returns the reason the series of the shipped pin whose upstream
// module is mainModule gives for waiving advisory id, if it does.
func Waiver(shipped []Shipped, mainModule, id string) (string, bool) {
	for _, s := range shipped {
		if s.Upstream.Module != mainModule {
			continue
		}
		for _, w := range s.Waivers {
			if w.ID == id {
				return w.Why, true
			}
		}
	}
	return "", false
}

// Waived reports whether Waiver has a reason.
func Waived(shipped []Shipped, mainModule, id string) bool {
	_, ok := Waiver(shipped, mainModule, id)
	return ok
}

// cell keeps a header value on one table row: folded header lines become
// spaces and a '|' cannot end the cell early.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
