package treetest

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultGODEBUGIsWhatTheBuildStamps: the value go list reports for a
// main package is the one go build writes into the binary, for a go line
// alone and for a raised go line with a godebug default; and a raised go
// line without the godebug line is reported as a difference.
func TestDefaultGODEBUGIsWhatTheBuildStamps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	tree := func(goMod string) string {
		dir := t.TempDir()
		for name, content := range map[string]string{
			"go.mod":          goMod,
			"cmd/app/main.go": "package main\n\nfunc main() {}\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	r := Runner{Env: env}
	ctx := context.Background()
	upstream := tree("module example.com/up\n\ngo 1.22.3\n")
	raised := tree("module example.com/up\n\ngo 1.25.0\n\ngodebug default=go1.22\n")
	bare := tree("module example.com/up\n\ngo 1.25.0\n")
	pkgs := []string{"./cmd/app"}

	for _, dir := range []string{upstream, raised} {
		listed, err := r.DefaultGODEBUG(ctx, dir, pkgs)
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), "app")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/app")
		cmd.Dir, cmd.Env = dir, append(env, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		var stamped string
		for _, s := range info.Settings {
			if s.Key == "DefaultGODEBUG" {
				stamped = s.Value
			}
		}
		if got := listed["example.com/up/cmd/app"]; got != stamped || got == "" {
			t.Errorf("%s: go list says %q, the binary carries %q", dir, got, stamped)
		}
	}

	results, differ, err := r.compareGODEBUG(ctx, raised, upstream, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(differ) != 0 || len(results) != 1 || results[0].Patched == "" {
		t.Errorf("go 1.25.0 with godebug default=go1.22 against go 1.22.3: %+v, differences %q", results, differ)
	}
	if _, differ, _ = r.compareGODEBUG(ctx, bare, upstream, pkgs); len(differ) != 1 || !strings.Contains(differ[0], "DefaultGODEBUG of example.com/up/cmd/app differs from upstream's go line") {
		t.Errorf("go 1.25.0 without a godebug line against go 1.22.3: differences %q", differ)
	}
}

// TestDefaultGODEBUGNamesANonMainPackageAndGoesOn: a listed package that is
// not a main package is reported as such (go list gives it no
// DefaultGODEBUG), and the packages after it are still read.
func TestDefaultGODEBUGNamesANonMainPackageAndGoesOn(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":          "module example.com/up\n\ngo 1.22.3\n",
		"a/lib/lib.go":    "package lib\n",
		"cmd/app/main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Runner{Env: append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")}
	// go list prints the packages in the order given: the library first.
	got, err := r.DefaultGODEBUG(context.Background(), dir, []string{"./a/lib", "./cmd/app"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["example.com/up/a/lib"] != "(no main package)" || got["example.com/up/cmd/app"] == "" {
		t.Errorf("DefaultGODEBUG = %q, want the library as no main package and the go 1.22.3 defaults of cmd/app", got)
	}
}
