package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/charts"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
)

// Section is one generated section of a page.
type Section struct {
	// Page is the file, relative to the repository root.
	Page string
	// Name is the marker's name.
	Name string
	// Render returns the section's text (between the markers).
	Render func(ctx context.Context, root string) (string, error)
}

// Sections are every generated section.
var Sections = []Section{
	{Page: "docs/adopting.md", Name: "build", Render: renderBuild},
	{Page: "docs/compatibility.md", Name: "artifacts", Render: renderArtifacts},
}

// GenerateCommand is what rewrites the sections.
const GenerateCommand = "make docs"

func beginMarker(name string) string {
	return "<!-- BEGIN GENERATED " + name + ": " + GenerateCommand + " writes this section; edit its sources, not the text -->"
}

func endMarker(name string) string { return "<!-- END GENERATED " + name + " -->" }

// Splice returns page with section name's text replaced by body.
func Splice(page []byte, file, name, body string) ([]byte, error) {
	begin, end := beginMarker(name), endMarker(name)
	i := bytes.Index(page, []byte(begin))
	j := bytes.Index(page, []byte(end))
	if i < 0 || j < 0 || j < i {
		return nil, fmt.Errorf("%s: no generated section %q (want the lines %q and %q)", file, name, begin, end)
	}
	var out bytes.Buffer
	out.Write(page[:i+len(begin)])
	out.WriteString("\n\n")
	out.WriteString(strings.TrimSpace(body))
	out.WriteString("\n\n")
	out.Write(page[j:])
	return out.Bytes(), nil
}

// Generate returns the page of s as its section's sources give it.
func Generate(ctx context.Context, root string, s Section) (current, generated []byte, err error) {
	path := filepath.Join(root, filepath.FromSlash(s.Page))
	current, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	body, err := s.Render(ctx, root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s, section %s: %w", s.Page, s.Name, err)
	}
	generated, err = Splice(current, s.Page, s.Name, body)
	return current, generated, err
}

// UpstreamMod is what an upstream release's go.mod says.
type UpstreamMod struct {
	// GoLine is its go directive ("1.25.10").
	GoLine string
	// ClientGo is its k8s.io/client-go requirement.
	ClientGo string
}

// ReadUpstreamMod reads mod@version's go.mod with `go list -m -json`,
// which fetches the .mod file alone (checksum database consulted), not
// the module's source.
func ReadUpstreamMod(ctx context.Context, mod, version string) (UpstreamMod, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return UpstreamMod{}, fmt.Errorf("go list -m -json %s@%s: %w: %s", mod, version, err, strings.TrimSpace(stderr.String()))
	}
	var m struct{ GoMod string }
	if err := json.Unmarshal(out, &m); err != nil {
		return UpstreamMod{}, fmt.Errorf("go list -m -json %s@%s: %w", mod, version, err)
	}
	data, err := os.ReadFile(m.GoMod)
	if err != nil {
		return UpstreamMod{}, err
	}
	f, err := modfile.ParseLax(m.GoMod, data, nil)
	if err != nil {
		return UpstreamMod{}, err
	}
	var u UpstreamMod
	if f.Go != nil {
		u.GoLine = f.Go.Version
	}
	for _, r := range f.Require {
		if r.Mod.Path == "k8s.io/client-go" {
			u.ClientGo = r.Mod.Version
		}
	}
	if u.GoLine == "" || u.ClientGo == "" {
		return UpstreamMod{}, fmt.Errorf("go.mod of %s@%s: want a go line and a k8s.io/client-go requirement", mod, version)
	}
	return u, nil
}

// pin is one pins.txt pin with what the sections say about it.
type pin struct {
	up  *pins.Upstream
	pin pins.Pin
	mod UpstreamMod
}

func loadPins(ctx context.Context, root string) ([]pin, error) {
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		return nil, err
	}
	var out []pin
	for _, u := range f.Upstreams {
		for _, p := range u.Pins {
			m, err := ReadUpstreamMod(ctx, u.Module, p.Version)
			if err != nil {
				return nil, err
			}
			out = append(out, pin{u, p, m})
		}
	}
	return out, nil
}

func (p pin) title() string {
	name := map[string]string{"karmada": "Karmada", "workeroperator": "worker-operator"}[p.up.Name]
	if name == "" {
		name = p.up.Name
	}
	return name + " " + p.pin.Version
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// renderBuild is adopting.md's build section.
func renderBuild(ctx context.Context, root string) (string, error) {
	ps, err := loadPins(ctx, root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Every shipped binary is compiled with **%s** (`build.Toolchain`), whatever Go upstream's own\n", build.Toolchain)
	b.WriteString("release build used: its standard library carries the fixes upstream's toolchain lacks. The\n")
	b.WriteString("dependency versions are upstream's except the overrides below, each raised by one `go get`\n")
	b.WriteString("in the patched tree (checksum database consulted) to fix a reachable advisory; an advisory\n")
	b.WriteString("no override can fix is waived, with its reason. Both are per upstream minor, in\n")
	b.WriteString("`patches/<upstream>/<minor>/overrides` ([format](pipeline.md#dependency-overrides)).\n\n")
	b.WriteString("| pin | holdfast version | upstream's go line | shipped go line | compiled with | client-go | overrides | waivers |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	type loaded struct {
		p pin
		f overrides.File
	}
	var all []loaded
	for _, p := range ps {
		path := filepath.Join(root, filepath.FromSlash(p.pin.Series), overrides.FileName)
		f, present, err := overrides.Load(path)
		if err != nil {
			return "", err
		}
		name := p.title()
		if p.pin.Default {
			name += " (default)"
		}
		over, waive := "none", "none"
		if present {
			over, waive = fmt.Sprint(len(f.Entries)), fmt.Sprint(len(f.Waivers))
		}
		shipped := "upstream's"
		if f.Go != nil {
			shipped = fmt.Sprintf("`go %s`, `godebug default=go%s`", f.Go.Version, majorMinor(p.mod.GoLine))
		}
		fmt.Fprintf(&b, "| %s | `%s` | `go %s` | %s | %s | %s | %s | %s |\n", name, p.pin.VersionString(), p.mod.GoLine, shipped, build.Toolchain, p.mod.ClientGo, over, waive)
		all = append(all, loaded{p, f})
	}
	b.WriteString("\nUpstream's go line is the one its go.mod declares (read with `go list -m -json MODULE@VERSION`).\n")
	b.WriteString("Where a fixed version's go.mod needs a newer one, the series raises it (its `go` entry, below)\n")
	b.WriteString("and the apply step adds `godebug default=go<upstream's major.minor>` to go.mod, so every\n")
	b.WriteString("default GODEBUG setting stays upstream's: `holdfast test` fails when a shipped binary's\n")
	b.WriteString("`DefaultGODEBUG` differs from the same package's in the released tree (upstream's own go.mod).\n")
	for _, l := range all {
		series := l.p.pin.Series + "/" + overrides.FileName
		fmt.Fprintf(&b, "\n#### %s (`%s`)\n\n", l.p.title(), series)
		if l.f.Go != nil {
			fmt.Fprintf(&b, "Go line raised from `go %s` to `go %s` (`godebug default=go%s`): %s.\n\n", l.p.mod.GoLine, l.f.Go.Version, majorMinor(l.p.mod.GoLine), l.f.Go.Why)
		}
		if len(l.f.Entries) == 0 {
			b.WriteString("No override: every dependency is at upstream's version.\n")
		} else {
			b.WriteString("| module | raised to | fixes | why this version | drop when upstream requires |\n|---|---|---|---|---|\n")
			for _, e := range l.f.Entries {
				fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | `>= %s` |\n", e.Module, e.Version, strings.Join(e.Fixes, " "), cell(e.Why), e.DropWhen)
			}
		}
		if len(l.f.Waivers) > 0 {
			b.WriteString("\nWaived (reachable, no override can take the fix; shipped as `affected` in the VEX with this reason):\n\n")
			b.WriteString("| advisory | blocker | why | ends when |\n|---|---|---|---|\n")
			for _, w := range l.f.Waivers {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", w.ID, w.Blocker, cell(w.Why), cell(w.EndsWhen))
			}
		}
	}
	fmt.Fprintf(&b, "\n**Where the VEX is.** Every release carries `%s/%s`: one OpenVEX statement per advisory\n", vulnreport.FolderName, vulnreport.VEXFile)
	b.WriteString("govulncheck still finds in a shipped binary (`affected` with the waiver's reason above, or\n")
	b.WriteString("`not_affected` when no vulnerable function is reachable), the same document as each image's\n")
	b.WriteString("`openvex` attestation ([verifying.md](verifying.md#images)). `make vulns` writes it for the\n")
	b.WriteString("binaries you built, and `holdfast vulns --pristine` puts upstream's counts beside them.\n")
	return b.String(), nil
}

// majorMinor is the release a go line names for `godebug default`
// (1.25.10 gives 1.25), as the apply step writes it.
func majorMinor(goLine string) string {
	parts := strings.SplitN(goLine, ".", 3)
	if len(parts) < 2 {
		return goLine
	}
	return parts[0] + "." + parts[1]
}

// renderArtifacts is compatibility.md's map from the pins to a release's
// artifacts.
func renderArtifacts(ctx context.Context, root string) (string, error) {
	ps, err := loadPins(ctx, root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("A release `vX.Y.Z` of holdfast ships the **default** pin of each upstream at the commit it\n")
	b.WriteString("was tagged from; the other pins are built and tested (`make matrix`), not released. At\n")
	b.WriteString("this commit:\n\n")
	b.WriteString("| upstream release | holdfast version (binaries report it) | images (`" + imagebuild.DefaultRegistry + "/…`) | chart (`oci://" + imagebuild.DefaultRegistry + "/charts/…`) | upstream's client-go | released |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	chartOf := map[string]string{}
	for _, c := range charts.Charts {
		chartOf[c.Upstream] = c.Name
	}
	for _, p := range ps {
		var images []string
		for _, pkg := range p.up.Build {
			images = append(images, "`"+p.up.BinaryName(pkg)+":"+p.pin.VersionString()+"`")
		}
		chart, released := "-", "no (tested only)"
		if p.pin.Default {
			released = "yes"
			if name, ok := chartOf[p.up.Name]; ok {
				chart = "`" + name + "` `" + charts.ChartVersion(p.pin) + "`"
			}
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", p.title(), p.pin.VersionString(), strings.Join(images, "<br>"), chart, p.mod.ClientGo, released)
	}
	b.WriteString("\nA release's `RELEASE-NOTES.md` lists the same names with every image's digests, and its\n")
	b.WriteString("charts pull those images by digest ([release.md](release.md#what-a-release-is)).\n")
	return b.String(), nil
}
