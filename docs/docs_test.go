package docs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

const root = ".."

// TestGeneratedSectionsAreCurrent: a generated section is what its sources
// give; after a change to pins.txt or an overrides file, `make docs`.
func TestGeneratedSectionsAreCurrent(t *testing.T) {
	for _, s := range Sections {
		current, generated, err := Generate(context.Background(), root, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(current, generated) {
			t.Errorf("%s: section %s is not what its sources give (%s); run `%s` and commit the result:\n%s",
				s.Page, s.Name, "pins.txt, patches/*/*/overrides, build.Toolchain, upstream go.mod", GenerateCommand, firstDifference(current, generated))
		}
	}
}

func firstDifference(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  committed: %s\n  generated: %s", i+1, x, y)
		}
	}
	return ""
}

// doc is one file a user reads, as lines.
type doc struct {
	name  string
	lines []string
	// code marks the lines inside fenced code blocks.
	code []bool
}

// readerDocs are what the consistency tests read: README.md, docs/*.md,
// the charts' values files and NOTES, and the lines patches add to the
// Karmada chart's values and NOTES (the chart ships from upstream's tree).
func readerDocs(t *testing.T) []doc {
	t.Helper()
	var names []string
	names = append(names, "README.md")
	mds, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, m := range mds {
		rel, _ := filepath.Rel(root, m)
		names = append(names, rel)
	}
	_ = filepath.WalkDir(filepath.Join(root, "charts"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "values.yaml" || d.Name() == "NOTES.txt") {
			rel, _ := filepath.Rel(root, p)
			names = append(names, rel)
		}
		return nil
	})
	var docs []doc
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, n))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, newDoc(filepath.ToSlash(n), string(data)))
	}
	patches, _ := filepath.Glob(filepath.Join(root, "patches", "*", "*", "*.patch"))
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		var added []string
		file := ""
		for _, l := range strings.Split(string(data), "\n") {
			if f, ok := strings.CutPrefix(l, "+++ b/"); ok {
				file = f
				continue
			}
			base := filepath.Base(file)
			if (base == "values.yaml" || base == "NOTES.txt") && strings.HasPrefix(l, "+") {
				added = append(added, l[1:])
			} else {
				added = append(added, "")
			}
		}
		if len(added) > 0 {
			docs = append(docs, doc{name: filepath.ToSlash(rel), lines: added, code: make([]bool, len(added))})
		}
	}
	return docs
}

func newDoc(name, text string) doc {
	d := doc{name: name, lines: strings.Split(text, "\n")}
	d.code = make([]bool, len(d.lines))
	in := false
	md := strings.HasSuffix(name, ".md")
	for i, l := range d.lines {
		if md && strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		d.code[i] = in || !md
	}
	return d
}

var inlineCode = regexp.MustCompile("`[^`]+`")

// codeSpans are the line's code: the whole line inside a fence (or in a
// non-Markdown file), else its `inline` spans.
func (d doc) codeSpans(i int) []string {
	if d.code[i] {
		return []string{d.lines[i]}
	}
	var out []string
	for _, m := range inlineCode.FindAllString(d.lines[i], -1) {
		out = append(out, strings.Trim(m, "`"))
	}
	return out
}

// historical are mentions of a revision other than the current one that
// are meant as such: what an older build did, or an error message quoting
// two revisions. Keyed by file and the line's text.
var historical = []struct{ file, line, why string }{
	{"docs/worker-operator.md", "Earlier builds (`v1.6.4-holdfast.1`)", "what an older build did"},
	{"docs/charts.md", `is of version "v1.18.2-holdfast.7", not v1.18.2-holdfast.8`, "an error quoting an older build"},
}

var holdfastVersion = regexp.MustCompile(`\bv?(\d+\.\d+\.\d+)-holdfast\.(\d+)\b`)

// TestDocsNameTheCurrentRevisions: a page that names a holdfast version of a
// pinned upstream version names the revision pins.txt gives it.
func TestDocsNameTheCurrentRevisions(t *testing.T) {
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]int{}
	for _, u := range f.Upstreams {
		for _, p := range u.Pins {
			current[strings.TrimPrefix(p.Version, "v")] = p.Revision
		}
	}
	for _, d := range readerDocs(t) {
	lines:
		for i, l := range d.lines {
			for _, h := range historical {
				if d.name == h.file && strings.Contains(l, h.line) {
					continue lines
				}
			}
			for _, m := range holdfastVersion.FindAllStringSubmatch(l, -1) {
				rev, _ := strconv.Atoi(m[2])
				want, pinned := current[m[1]]
				switch {
				case !pinned:
					t.Errorf("%s:%d: %s names a holdfast build of %s, which pins.txt does not pin", d.name, i+1, m[0], m[1])
				case rev != want:
					t.Errorf("%s:%d: %s, but pins.txt says revision=%d (%s-holdfast.%d)", d.name, i+1, m[0], want, strings.TrimSuffix(m[0], "-holdfast."+m[2]), want)
				}
			}
		}
	}
}

// makeVerbs are the targets `make help` lists (a ## comment).
func makeVerbs(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string]bool{}
	re := regexp.MustCompile(`^([a-zA-Z0-9_.-]+):.*## `)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			verbs[m[1]] = true
		}
	}
	return verbs
}

var makeCall = regexp.MustCompile(`(?:^|[\s;&|(])make\s+([a-zA-Z0-9_.=-]+)`)

// upstreamMakeVerbs are targets of an upstream's Makefile that pages name
// as upstream's, not holdfast's.
var upstreamMakeVerbs = map[string]string{
	"manifests": "worker-operator's kubebuilder Makefile: regenerates config/rbac/role.yaml",
	"deploy":    "worker-operator's kubebuilder Makefile: applies config/",
}

// TestDocsNameMakeVerbsThatExist: every `make VERB` a page shows is one
// `make help` lists.
func TestDocsNameMakeVerbsThatExist(t *testing.T) {
	verbs := makeVerbs(t)
	for v := range upstreamMakeVerbs {
		verbs[v] = true
	}
	for _, d := range readerDocs(t) {
		for i := range d.lines {
			for _, span := range d.codeSpans(i) {
				for _, m := range makeCall.FindAllStringSubmatch(span, -1) {
					v := m[1]
					if strings.Contains(v, "=") || strings.HasPrefix(v, "-") {
						continue // make VAR=value, make -C
					}
					if !verbs[v] {
						t.Errorf("%s:%d: `make %s`: no such verb in `make help` (Makefile targets with ##)", d.name, i+1, v)
					}
				}
			}
		}
	}
}

// holdfastVerbs are the verbs `holdfast help` lists.
func holdfastVerbs(t *testing.T) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "run", "./cmd/holdfast", "help")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./cmd/holdfast help: %v\n%s", err, out)
	}
	verbs := map[string]bool{}
	re := regexp.MustCompile(`(?m)^\s+holdfast ([a-z]+)`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		verbs[m[1]] = true
	}
	if len(verbs) < 5 {
		t.Fatalf("holdfast help lists %d verbs:\n%s", len(verbs), out)
	}
	return verbs
}

// holdfastCall is a holdfast command: at the start of a code span or
// after a shell separator, or `go run ./cmd/holdfast`. Prose inside a code
// block ("# which holdfast commit") is not a command.
var holdfastCall = regexp.MustCompile(`(?:^\s*(?:\$\s+)?|[;&|(]\s*|\./cmd/)holdfast\s+([a-z][a-z-]*)`)

// TestDocsNameHoldfastVerbsThatExist: every `holdfast VERB` (or `go run
// ./cmd/holdfast VERB`) a page shows is a verb of the CLI, and README.md
// names every verb.
func TestDocsNameHoldfastVerbsThatExist(t *testing.T) {
	verbs := holdfastVerbs(t)
	for _, d := range readerDocs(t) {
		if !strings.HasSuffix(d.name, ".md") {
			continue // a chart's NOTES say "holdfast worker-operator" in prose
		}
		for i := range d.lines {
			for _, span := range d.codeSpans(i) {
				for _, m := range holdfastCall.FindAllStringSubmatch(span, -1) {
					if !verbs[m[1]] {
						t.Errorf("%s:%d: `holdfast %s`: no such verb in `holdfast help`", d.name, i+1, m[1])
					}
				}
			}
		}
	}
	// README's Layout lists the verbs on its cmd/holdfast/ line and the
	// indented lines after it.
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	in := false
	for _, l := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(l, "cmd/holdfast/"):
			in = true
		case in && !strings.HasPrefix(l, " "):
			in = false
		}
		if in {
			list.WriteString(l + "\n")
		}
	}
	if list.Len() == 0 {
		t.Fatal("README.md has no Layout line starting with cmd/holdfast/")
	}
	var missing []string
	for v := range verbs {
		if v == "help" {
			continue
		}
		if !regexp.MustCompile(`\b` + v + `\b`).MatchString(list.String()) {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("README.md's Layout line for cmd/holdfast/ does not name the verbs %s:\n%s", strings.Join(missing, ", "), list.String())
	}
}

// definedNames are the string literals of the non-test Go files under
// overlay/ and pkg/ (where holdfast's flags and variables are defined)
// that match re.
func definedNames(t *testing.T, re *regexp.Regexp) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, dir := range []string{"overlay", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && re.MatchString(s) {
						names[s] = true
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return names
}

var (
	guardFlagDef     = regexp.MustCompile(`^own-credential-guard-[a-z-]+$`)
	guardFlagMention = regexp.MustCompile(`--(own-credential-guard-[a-z-]*[a-z])\b`)
	envDef           = regexp.MustCompile(`^(OWN_CREDENTIAL_GUARD|HUB_SECONDARY|HUB_RESOLVE|HUB_SWITCH)_[A-Z_]*[A-Z]$`)
	envMention       = regexp.MustCompile(`\b((?:OWN_CREDENTIAL_GUARD|HUB_SECONDARY|HUB_RESOLVE|HUB_SWITCH)_[A-Z_]*[A-Z])\b`)
)

// TestDocsNameFlagsTheBinariesHave: every flag and variable holdfast adds
// that a page names (--own-credential-guard-*, OWN_CREDENTIAL_GUARD_*,
// HUB_SECONDARY_*, HUB_RESOLVE_*, HUB_SWITCH_*) is defined in overlay/ or
// pkg/, and every one defined there is documented.
func TestDocsNameFlagsTheBinariesHave(t *testing.T) {
	flags := definedNames(t, guardFlagDef)
	envs := definedNames(t, envDef)
	if len(flags) == 0 || len(envs) == 0 {
		t.Fatalf("found %d guard flags and %d variables in overlay/ and pkg/: the parse is wrong", len(flags), len(envs))
	}
	named := map[string]bool{}
	for _, d := range readerDocs(t) {
		for i, l := range d.lines {
			for _, m := range guardFlagMention.FindAllStringSubmatch(l, -1) {
				named[m[1]] = true
				if !flags[m[1]] {
					t.Errorf("%s:%d: --%s: karmada-controller-manager has no such flag (overlay/ defines %s)", d.name, i+1, m[1], keys(flags))
				}
			}
			for _, m := range envMention.FindAllStringSubmatch(l, -1) {
				named[m[1]] = true
				if !envs[m[1]] {
					t.Errorf("%s:%d: %s: the worker reads no such variable (overlay/ and pkg/ define %s)", d.name, i+1, m[1], keys(envs))
				}
			}
		}
	}
	for _, m := range []map[string]bool{flags, envs} {
		for n := range m {
			if !named[n] {
				t.Errorf("%s is defined in overlay/ or pkg/ but named on no page", n)
			}
		}
	}
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// TestChangelogHasEveryCurrentRevision: CHANGELOG.md has an entry (a
// heading naming it) for the current revision of every pin.
func TestChangelogHasEveryCurrentRevision(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#") {
			headings = append(headings, l)
		}
	}
	for _, u := range f.Upstreams {
		for _, p := range u.Pins {
			want := p.VersionString()
			found := false
			for _, h := range headings {
				if regexp.MustCompile(`\b` + regexp.QuoteMeta(want) + `\b`).MatchString(h) {
					found = true
				}
			}
			if !found {
				t.Errorf("CHANGELOG.md has no entry for %s %s (pins.txt:%d): add a heading naming it with what changed and whether an upgrade needs anything", u.Name, want, p.Line)
			}
		}
	}
}
