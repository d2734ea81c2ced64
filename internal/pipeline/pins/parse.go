package pins

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

var (
	// An upstream name becomes a folder name and a command-line value.
	upstreamName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	// A carried library is a folder directly under pkg/.
	libName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	// A binary name is a file name on every platform.
	binaryName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	goIdent    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxErrors bounds the errors reported for one file: past a handful, the
// rest are usually consequences of the first.
const maxErrors = 10

type parser struct {
	name string
	file *File
	errs []error
	// Where each per-upstream directive was first seen, to report duplicates.
	seen map[*Upstream]map[string]int
}

// Parse parses the pin file content data; name is used in error messages.
// Every problem is reported as name:line: what is wrong.
func Parse(name string, data []byte) (*File, error) {
	p := &parser{name: name, file: &File{Name: name}, seen: map[*Upstream]map[string]int{}}
	var cur *Upstream
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		text, _, _ := strings.Cut(raw, "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		indented := text[0] == ' ' || text[0] == '\t'
		switch directive, args := fields[0], fields[1:]; directive {
		case "upstream":
			if indented {
				p.errorf(line, "upstream must start at the beginning of the line")
			}
			cur = p.upstream(line, args)
		case "carry", "build", "version", "pin":
			if cur == nil || !indented {
				p.errorf(line, "%s must be indented under an upstream line", directive)
				continue
			}
			p.directive(cur, line, directive, args)
		default:
			p.errorf(line, "unknown directive %q (want upstream, carry, build, version or pin)", directive)
		}
		if len(p.errs) >= maxErrors {
			break
		}
	}
	for _, u := range p.file.Upstreams {
		p.checkUpstream(u)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	if len(p.file.Upstreams) == 0 {
		return nil, fmt.Errorf("%s: no upstream listed", name)
	}
	return p.file, nil
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.name, line, fmt.Sprintf(format, args...)))
}

func (p *parser) upstream(line int, args []string) *Upstream {
	u := &Upstream{Line: line}
	p.seen[u] = map[string]int{}
	if len(args) != 2 {
		p.errorf(line, "want `upstream NAME MODULE`, got %d arguments", len(args))
		return u
	}
	u.Name, u.Module = args[0], args[1]
	if !upstreamName.MatchString(u.Name) {
		p.errorf(line, "upstream name %q must match %s", u.Name, upstreamName)
	}
	if err := module.CheckPath(u.Module); err != nil {
		p.errorf(line, "upstream %s: %v", u.Name, err)
	}
	for _, other := range p.file.Upstreams {
		if other.Name == u.Name {
			p.errorf(line, "upstream %s is already listed at line %d", u.Name, other.Line)
		}
	}
	p.file.Upstreams = append(p.file.Upstreams, u)
	return u
}

func (p *parser) directive(u *Upstream, line int, directive string, args []string) {
	if directive != "pin" {
		if first, dup := p.seen[u][directive]; dup {
			p.errorf(line, "%s is already given for upstream %s at line %d", directive, u.Name, first)
			return
		}
		p.seen[u][directive] = line
	}
	switch directive {
	case "carry":
		u.Carry = p.list(line, directive, args, func(s string) error {
			if !libName.MatchString(s) {
				return fmt.Errorf("library %q must be a folder name under pkg/ matching %s", s, libName)
			}
			return nil
		})
	case "build":
		u.Build, u.Binaries = p.build(line, args)
	case "version":
		u.Version = p.version(line, args)
	case "pin":
		if pin, ok := p.pin(line, args); ok {
			u.Pins = append(u.Pins, pin)
		}
	}
}

func (p *parser) list(line int, directive string, args []string, check func(string) error) []string {
	if len(args) == 0 {
		p.errorf(line, "%s needs at least one value", directive)
	}
	seen := map[string]bool{}
	for _, a := range args {
		if err := check(a); err != nil {
			p.errorf(line, "%s: %v", directive, err)
		}
		if seen[a] {
			p.errorf(line, "%s lists %s twice", directive, a)
		}
		seen[a] = true
	}
	return args
}

// build reads `build PKG[=BINARY]...`.
func (p *parser) build(line int, args []string) ([]string, map[string]string) {
	var pkgs []string
	var binaries map[string]string
	for _, s := range p.list(line, "build", args, checkBuildArg) {
		pkg, name, named := strings.Cut(s, "=")
		pkgs = append(pkgs, pkg)
		if named {
			if binaries == nil {
				binaries = map[string]string{}
			}
			binaries[pkg] = name
		}
	}
	// Two packages whose binaries share a name would overwrite each other
	// in the output folder.
	u := &Upstream{Binaries: binaries}
	seen := map[string]string{}
	for _, pkg := range pkgs {
		if pkg == "." {
			continue // named after the module, which cannot clash with a path element check here
		}
		name := u.BinaryName(pkg)
		if other, dup := seen[name]; dup {
			p.errorf(line, "build: %s and %s would both be built as %s; name one with PKG=BINARY", other, pkg, name)
		}
		seen[name] = pkg
	}
	return pkgs, binaries
}

func checkBuildArg(s string) error {
	pkg, name, named := strings.Cut(s, "=")
	if err := checkBuildPackage(pkg); err != nil {
		return err
	}
	if named && !binaryName.MatchString(name) {
		return fmt.Errorf("binary name %q must match %s", name, binaryName)
	}
	return nil
}

// version reads `version PKG VAR=FIELD...`.
func (p *parser) version(line int, args []string) *VersionVars {
	if len(args) < 2 {
		p.errorf(line, "want `version PKG VAR=FIELD...` (fields: %s)", fieldNames())
		return nil
	}
	v := &VersionVars{Package: args[0]}
	if err := checkBuildPackage("./" + v.Package); err != nil || v.Package == "." {
		p.errorf(line, "version: package %q must be a clean path inside the module, without ./", v.Package)
	}
	seen := map[string]bool{}
	for _, a := range args[1:] {
		name, field, ok := strings.Cut(a, "=")
		switch {
		case !ok || !goIdent.MatchString(name):
			p.errorf(line, "version: %q must be VAR=FIELD with VAR a Go variable name", a)
			continue
		case !knownField(VersionField(field)):
			p.errorf(line, "version: %s: unknown field %q (fields: %s)", name, field, fieldNames())
			continue
		case seen[name]:
			p.errorf(line, "version: %s is set twice", name)
			continue
		}
		seen[name] = true
		v.Vars = append(v.Vars, VersionVar{Name: name, Field: VersionField(field)})
	}
	return v
}

func knownField(f VersionField) bool {
	for _, k := range versionFields {
		if k == f {
			return true
		}
	}
	return false
}

func fieldNames() string {
	names := make([]string, len(versionFields))
	for i, f := range versionFields {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func checkBuildPackage(s string) error {
	if s == "." {
		return nil
	}
	rel, ok := strings.CutPrefix(s, "./")
	if !ok || path.Clean(rel) != rel || rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
		return fmt.Errorf("package %q must be \".\" or \"./\" followed by a clean path inside the module", s)
	}
	return nil
}

// buildTag is what the go command accepts in -tags (go/build's constraint
// identifiers), checked so that a typo fails at parse time, not in a build.
var buildTag = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

func (p *parser) pin(line int, args []string) (Pin, bool) {
	pin := Pin{Line: line}
	nerr := len(p.errs)
	if len(args) < 2 {
		p.errorf(line, "want `pin VERSION SUM series=DIR revision=N [tags=TAG,...] [default]`")
		return pin, false
	}
	pin.Version, pin.Sum = args[0], args[1]
	if !semver.IsValid(pin.Version) || semver.Canonical(pin.Version) != pin.Version {
		p.errorf(line, "version %q is not a full semantic version such as v1.18.2", pin.Version)
	}
	if err := checkSum(pin.Sum); err != nil {
		p.errorf(line, "%s: %v", pin.Version, err)
	}
	given := map[string]bool{}
	for _, opt := range args[2:] {
		key, value, hasValue := strings.Cut(opt, "=")
		if given[key] {
			p.errorf(line, "option %s given twice", key)
			continue
		}
		given[key] = true
		switch {
		case key == "default" && !hasValue:
			pin.Default = true
		case key == "series" && hasValue:
			if err := checkSeriesDir(value); err != nil {
				p.errorf(line, "%v", err)
			}
			pin.Series = value
		case key == "revision" && hasValue:
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				p.errorf(line, "revision %q must be a whole number from 1 up", value)
			}
			pin.Revision = n
		case key == "tags" && hasValue:
			var tags []string
			for _, tag := range strings.Split(value, ",") {
				if !buildTag.MatchString(tag) {
					p.errorf(line, "tags: %q is not a build tag (letters, digits, _ and .)", tag)
					continue
				}
				if slices.Contains(tags, tag) {
					p.errorf(line, "tags: %s given twice", tag)
					continue
				}
				tags = append(tags, tag)
			}
			pin.Tags = strings.Join(tags, ",")
		default:
			p.errorf(line, "unknown pin option %q (want series=DIR, revision=N, tags=TAG,... or default)", opt)
		}
	}
	for _, required := range []string{"series", "revision"} {
		if !given[required] {
			p.errorf(line, "pin %s has no %s= option", pin.Version, required)
		}
	}
	return pin, len(p.errs) == nerr
}

// checkSum accepts only h1: hashes, the kind `go mod download -json` reports
// and golang.org/x/mod/sumdb/dirhash recomputes (SHA-256, base64).
func checkSum(sum string) error {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return fmt.Errorf("checksum %q must be an h1: hash as `go mod download -json` reports it", sum)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 32 {
		return fmt.Errorf("checksum %q is not a base64 SHA-256 hash", sum)
	}
	return nil
}

func checkSeriesDir(dir string) error {
	if dir == "" || path.IsAbs(dir) || path.Clean(dir) != dir || dir == "." || dir == ".." || strings.HasPrefix(dir, "../") {
		return fmt.Errorf("series %q must be a clean folder path inside the repository", dir)
	}
	return nil
}

func (p *parser) checkUpstream(u *Upstream) {
	if u.Name == "" {
		return // already reported
	}
	if len(u.Build) == 0 {
		p.errorf(u.Line, "upstream %s has no build line", u.Name)
	}
	if len(u.Pins) == 0 {
		p.errorf(u.Line, "upstream %s has no pin", u.Name)
		return
	}
	var def *Pin
	minors := map[string]Pin{}
	for i := range u.Pins {
		pin := &u.Pins[i]
		if pin.Default {
			if def != nil {
				p.errorf(pin.Line, "upstream %s has a second default pin (the first is %s at line %d)", u.Name, def.Version, def.Line)
			}
			def = pin
		}
		// One pin per minor, like one patch series per minor: a rebase
		// onto a new patch release replaces the pin of its minor.
		if other, dup := minors[pin.Minor()]; dup {
			p.errorf(pin.Line, "upstream %s pins %s twice: %s here and %s at line %d", u.Name, pin.Minor(), pin.Version, other.Version, other.Line)
		}
		minors[pin.Minor()] = *pin
	}
	if def == nil {
		p.errorf(u.Line, "upstream %s has no pin marked default", u.Name)
	}
}
