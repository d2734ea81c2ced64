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

// Result is what Apply did.
type Result struct {
	Verdicts []Verdict
	// Applied are the entries applied, in file order.
	Applied []Verdict
	// Changes are every requirement that moved, the overridden modules
	// and any the go command raised with them, sorted by module.
	Changes []Change
}

// Apply raises the tree's requirements to the entries that are still
// needed, with one `go get MODULE@VERSION...`. A superseded entry changes nothing
// (the rebase report says to drop it); a conflicting one, a go get that
// fails, or one that would move the go or toolchain line is an error
// naming the entry, and leaves the tree to be discarded by the caller.
func Apply(ctx context.Context, dir string, entries []Entry, g Go) (*Result, error) {
	goModPath := filepath.Join(dir, "go.mod")
	before, err := os.ReadFile(goModPath)
	if err != nil {
		return nil, err
	}
	verdicts, err := Check(goModPath, before, entries)
	if err != nil {
		return nil, err
	}
	res := &Result{Verdicts: verdicts}
	bin := g.Bin
	if bin == "" {
		bin = "go"
	}
	var args []string
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
	if res.Changes, err = diff(goModPath, before, after); err != nil {
		return nil, err
	}
	return res, nil
}

// diff lists the requirements that moved and refuses a moved go or
// toolchain line: the go line sets the binaries' GODEBUG defaults.
func diff(name string, before, after []byte) ([]Change, error) {
	b, err := modfile.ParseLax(name, before, nil)
	if err != nil {
		return nil, err
	}
	a, err := modfile.ParseLax(name, after, nil)
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
	if bg != ag || bt != at {
		return nil, fmt.Errorf("%s: the overrides moved the go line from %q to %q (toolchain %q to %q): a module needs a newer Go than upstream's go line, which would change the binaries' GODEBUG defaults; choose an older fixed version or waive the advisory", name, bg, ag, bt, at)
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
