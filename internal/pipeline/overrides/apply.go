package overrides

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Status is what an entry means for one upstream version.
type Status string

const (
	// Needed: upstream requires a version below the entry's drop-when.
	Needed Status = "still needed"
	// Superseded: upstream requires the drop-when version or above; the
	// entry can go.
	Superseded Status = "superseded by upstream"
	// Conflicts: the tree cannot take the entry as written (see Check).
	Conflicts Status = "conflicts"
)

// Verdict is one entry's status against one go.mod.
type Verdict struct {
	Entry Entry
	// Upstream is the version upstream's go.mod requires, empty when it
	// does not require the module.
	Upstream string
	Status   Status
	// Reason says why, for Conflicts and Superseded.
	Reason string
}

// Check classifies each entry against upstream's go.mod, without the go
// command: what `holdfast rebase` and `holdfast watch` report for a new
// upstream version before anything is applied. A module upstream does not
// require (the override would add a dependency, not raise one) or replaces
// (the replacement decides, not the requirement) conflicts.
func Check(goModName string, goMod []byte, entries []Entry) ([]Verdict, error) {
	f, err := modfile.Parse(goModName, goMod, nil)
	if err != nil {
		return nil, err
	}
	var out []Verdict
	for _, e := range entries {
		v := Verdict{Entry: e}
		for _, r := range f.Require {
			if r.Mod.Path == e.Module {
				v.Upstream = r.Mod.Version
			}
		}
		replaced := slices.ContainsFunc(f.Replace, func(r *modfile.Replace) bool { return r.Old.Path == e.Module })
		switch {
		case replaced:
			v.Status, v.Reason = Conflicts, "upstream's go.mod replaces "+e.Module+": the replacement decides its code, not the requirement"
		case v.Upstream == "":
			v.Status, v.Reason = Conflicts, "upstream does not require "+e.Module+" (any more): the override would add a dependency"
		case semver.Compare(v.Upstream, e.DropWhen) >= 0:
			v.Status, v.Reason = Superseded, fmt.Sprintf("upstream requires %s >= %s: drop the entry", v.Upstream, e.DropWhen)
		default:
			v.Status = Needed
		}
		out = append(out, v)
	}
	return out, nil
}

// GoModule names the go entry in a Verdict: it is no module, but rebase
// and watch judge it with the requirements.
const GoModule = "go"

// CheckGo judges the series' go entry against upstream's go.mod the way
// Check judges a requirement: once upstream's own go line is at least the
// entry's, the entry raises nothing (Apply skips it) and can go. Upstream
// is upstream's go line.
func CheckGo(goModName string, goMod []byte, g GoLine) (Verdict, error) {
	upstreamGo, err := goLineOf(goModName, goMod)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Entry: Entry{Module: GoModule, Version: g.Version, Line: g.Line}, Upstream: upstreamGo, Status: Needed}
	if compareGo(upstreamGo, g.Version) >= 0 {
		v.Status, v.Reason = Superseded, fmt.Sprintf("upstream's go line %s is at least %s: drop the go entry (and its godebug line goes with it)", upstreamGo, g.Version)
	}
	return v, nil
}

// Go runs the go command for Apply.
type Go struct {
	// Bin is the go command; empty is "go" from PATH.
	Bin string
	// Env returns the environment for fetching module (the checksum
	// database settings checked for it, as for the pins); nil inherits
	// holdfast's.
	Env func(ctx context.Context, dir, module string) ([]string, error)
}

// Change is one requirement the apply moved.
type Change struct {
	Module, From, To string
}

// GoLineChange is what a go entry did to the tree.
type GoLineChange struct {
	Entry GoLine
	// From is upstream's go line.
	From string
	// Godebug is the godebug default the apply wrote (default=go1.25),
	// or upstream's own, which it kept.
	Godebug string
}

// String is the change as the provenance records it.
func (c GoLineChange) String() string {
	return fmt.Sprintf("%s => %s (godebug %s; %s)", c.From, c.Entry.Version, c.Godebug, c.Entry.Why)
}

// Result is what Apply did.
type Result struct {
	Verdicts []Verdict
	// Applied are the entries applied, in file order.
	Applied []Verdict
	// Changes are every requirement that moved, the overridden modules
	// and any the go command raised with them, sorted by module.
	Changes []Change
	// GoLine is set when the go entry raised the go line; GoSuperseded
	// says why a go entry changed nothing (upstream's line is as new).
	GoLine       *GoLineChange
	GoSuperseded string
}

// Plan is what Apply applies: a series' overrides file.
type Plan struct {
	Go      *GoLine
	Entries []Entry
}

// Apply raises the tree's requirements to the entries that are still
// needed, with one `go get [go@V] MODULE@VERSION...`. A superseded entry changes nothing
// (the rebase report says to drop it); a conflicting one, a go get that
// fails, or one that moves the go line other than as the go entry says
// (or the toolchain line at all) is an error naming the entry, and leaves
// the tree to be discarded by the caller. When the go entry raises the go
// line, Apply writes `godebug default=go<upstream's major.minor>` into
// go.mod, so the binaries keep the GODEBUG defaults upstream's go line
// gave them.
func Apply(ctx context.Context, dir string, plan Plan, g Go) (*Result, error) {
	goModPath := filepath.Join(dir, "go.mod")
	before, err := os.ReadFile(goModPath)
	if err != nil {
		return nil, err
	}
	verdicts, err := Check(goModPath, before, plan.Entries)
	if err != nil {
		return nil, err
	}
	res := &Result{Verdicts: verdicts}
	upstreamGo, err := goLineOf(goModPath, before)
	if err != nil {
		return nil, err
	}
	raise := plan.Go != nil && compareGo(upstreamGo, plan.Go.Version) < 0
	if plan.Go != nil && !raise {
		res.GoSuperseded = fmt.Sprintf("upstream's go line %s is at least %s: drop the go entry", upstreamGo, plan.Go.Version)
	}
	bin := g.Bin
	if bin == "" {
		bin = "go"
	}
	var args []string
	if raise {
		args = append(args, "go@"+plan.Go.Version)
	}
	env := os.Environ()
	for _, v := range verdicts {
		switch v.Status {
		case Conflicts:
			return nil, fmt.Errorf("override %s %s (line %d): %s", v.Entry.Module, v.Entry.Version, v.Entry.Line, v.Reason)
		case Superseded:
			continue
		}
		if g.Env != nil {
			// The same settings decide every module's fetch; checking each
			// path refuses a GOPRIVATE or GONOSUMDB pattern matching any.
			if env, err = g.Env(ctx, dir, v.Entry.Module); err != nil {
				return nil, fmt.Errorf("override %s %s: %w", v.Entry.Module, v.Entry.Version, err)
			}
		}
		args = append(args, v.Entry.Module+"@"+v.Entry.Version)
		res.Applied = append(res.Applied, v)
	}
	if len(args) > 0 {
		// One go get for every entry: the go command then refuses entries
		// that contradict each other (one module's version requiring
		// more of another than its entry says) instead of one entry
		// silently undoing an earlier one.
		cmd := exec.CommandContext(ctx, bin, append([]string{"get"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(env, "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("overrides: go get %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(out)))
		}
	}
	after, err := os.ReadFile(goModPath)
	if err != nil {
		return nil, err
	}
	want := upstreamGo
	if raise {
		want = plan.Go.Version
	}
	if res.Changes, err = diff(goModPath, before, after, want); err != nil {
		return nil, err
	}
	if raise {
		if res.GoLine, err = keepGodebug(goModPath, after, upstreamGo, *plan.Go); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// keepGodebug writes `godebug default=go1.N` (N upstream's go line's
// minor) into the go.mod at path, whose go line the go entry raised: the
// go command then derives the binaries' default GODEBUG settings from
// go1.N, not from the raised line. A godebug default upstream set itself
// already decides them and is kept.
func keepGodebug(path string, data []byte, upstreamGo string, entry GoLine) (*GoLineChange, error) {
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return nil, err
	}
	ch := &GoLineChange{Entry: entry, From: upstreamGo}
	for _, d := range f.Godebug {
		if d.Key == "default" {
			ch.Godebug = "default=" + d.Value + " (upstream's)"
			return ch, nil
		}
	}
	major, minor, _ := strings.Cut(upstreamGo, ".")
	minor, _, _ = strings.Cut(minor, ".")
	value := "go" + major + "." + minor
	if err := f.AddGodebug("default", value); err != nil {
		return nil, fmt.Errorf("%s: godebug default=%s: %w", path, value, err)
	}
	out, err := f.Format()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return nil, err
	}
	ch.Godebug = "default=" + value
	return ch, nil
}

// goLineOf is the go line of a go.mod (1.0 when it has none, as the go
// command reads it, though every pinned upstream states one).
func goLineOf(name string, data []byte) (string, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return "", err
	}
	if f.Go == nil {
		return "1.0", nil
	}
	return f.Go.Version, nil
}

// compareGo compares two go lines (1.25, 1.25.10) by release.
func compareGo(a, b string) int {
	return semver.Compare("v"+a, "v"+b)
}

// diff lists the requirements that moved and refuses a go line other than
// want (upstream's, or the go entry's) and a moved toolchain line: the go
// line is the series' decision, stated in its go entry, never a side
// effect of a module's go.mod.
func diff(name string, before, after []byte, want string) ([]Change, error) {
	b, err := modfile.Parse(name, before, nil)
	if err != nil {
		return nil, err
	}
	a, err := modfile.Parse(name, after, nil)
	if err != nil {
		return nil, err
	}
	line := func(f *modfile.File) (string, string) {
		var g, t string
		if f.Go != nil {
			g = f.Go.Version
		}
		if f.Toolchain != nil {
			t = f.Toolchain.Name
		}
		return g, t
	}
	bg, bt := line(b)
	ag, at := line(a)
	switch {
	case bt != at:
		return nil, fmt.Errorf("%s: the overrides moved the toolchain line from %q to %q: holdfast builds with its own toolchain and leaves upstream's line as it is", name, bt, at)
	case ag != want && want == bg:
		return nil, fmt.Errorf("%s: the overrides moved the go line from %q to %q: a module needs a newer Go than upstream's go line; raise it with a `go %s` entry (the apply step keeps upstream's GODEBUG defaults with a godebug line) or choose an older fixed version", name, bg, ag, ag)
	case ag != want:
		return nil, fmt.Errorf("%s: the overrides moved the go line from %q to %q, past the go entry's %q: a module needs a newer Go than the entry says; raise the go entry to %s", name, bg, ag, want, ag)
	}
	was := map[string]string{}
	for _, r := range b.Require {
		was[r.Mod.Path] = r.Mod.Version
	}
	var changes []Change
	for _, r := range a.Require {
		if was[r.Mod.Path] != r.Mod.Version {
			changes = append(changes, Change{Module: r.Mod.Path, From: was[r.Mod.Path], To: r.Mod.Version})
		}
	}
	slices.SortFunc(changes, func(x, y Change) int { return strings.Compare(x.Module, y.Module) })
	return changes, nil
}
