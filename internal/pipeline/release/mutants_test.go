package release

// Tests written from the mutants `make mutate` found living in this
// package (docs/testing.md): each pins a behaviour no other test observed.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
)

// TestNotesSayWhatIsThere: the upstream status column reads each way a
// header can put it, and a section is there exactly when it has content.
func TestNotesSayWhatIsThere(t *testing.T) {
	p := func(name, applied, backport string) *patchset.Patch {
		return &patchset.Patch{Path: "patches/up/1.0/" + name, Header: patchset.Header{
			Subject: "s", HoldfastFix: "f", UpstreamIssue: "i", UpstreamPR: "p", DropWhen: "d",
			AppliedUpstream: applied, UpstreamBackport: backport}}
	}
	n := Notes{Version: "v1.0.0", Source: build.Source{Commit: commit, Date: time.Unix(0, 0)}, Shipped: []Shipped{{
		Upstream: &pins.Upstream{Name: "up", Module: "example.com/up"},
		Pin:      pins.Pin{Version: "v1.0.0", Revision: 1, Series: "patches/up/1.0"},
		Series: []*patchset.Patch{
			p("0001-a.patch", "", ""),
			p("0002-b.patch", "No", ""),
			p("0003-c.patch", "v1.2.0", ""),
			p("0004-d.patch", "v1.2.0", "https://example.com/pr/1"),
			p("0005-e.patch", "no", "https://example.com/pr/2"),
		},
	}}}
	md := string(n.Markdown())
	for _, row := range []string{
		"| `0001-a.patch` | s | f | i | p | not upstream | d |\n",
		"| `0002-b.patch` | s | f | i | p | not upstream | d |\n",
		"| `0003-c.patch` | s | f | i | p | in v1.2.0 | d |\n",
		"| `0004-d.patch` | s | f | i | p | in v1.2.0; backport: https://example.com/pr/1 | d |\n",
		"| `0005-e.patch` | s | f | i | p | not upstream; backport: https://example.com/pr/2 | d |\n",
	} {
		if !strings.Contains(md, row) {
			t.Errorf("notes lack the row %q:\n%s", row, md)
		}
	}
	for _, absent := range []string{"## Artifacts", "## Images", "## Vulnerabilities", "## End-to-end"} {
		if strings.Contains(md, absent) {
			t.Errorf("notes with nothing for it have a %q section:\n%s", absent, md)
		}
	}

	n.Vulnerabilities, n.E2E = "no known vulnerabilities\n", "| suite |\n"
	md = string(n.Markdown())
	for _, want := range []string{"\n## Vulnerabilities\n\nno known vulnerabilities\n", "\n## End-to-end\n\n| suite |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("notes lack %q:\n%s", want, md)
		}
	}
}

// TestAssembleRefusesAReportOfAnotherVersion: the upstream-test report read
// for a pin must hold that pin's result and only it.
func TestAssembleRefusesAReportOfAnotherVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Options)
	}{
		{"another version", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) { r.Version = "v0.0.1" })
		}},
		{"two results", func(t *testing.T, o *Options) {
			sh := o.Shipped[0]
			name := filepath.Join(o.Inputs.Reports, "test-"+sh.Upstream.Name+"-"+sh.Pin.Version+".json")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			one := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(data)), "["), "]")
			writeFile(t, name, "["+one+","+one+"]")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.change(t, &f.opts)
			_, err := Assemble(context.Background(), f.opts)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "expected one result for") {
				t.Errorf("err = %v, want refused: expected one result", err)
			}
		})
	}
}

// TestCopyKeepsContentAndMode: a release file has its source's bytes, and
// is executable exactly when its source is; an empty input folder is an
// error, not an empty part of the release.
func TestCopyKeepsContentAndMode(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for name, mode := range map[string]os.FileMode{"tool": 0o755, "notes.txt": 0o644} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("content of "+name), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(src, name), mode); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dst, "sub", name)
		if err := copyFile(filepath.Join(src, name), out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "content of "+name || info.Mode().Perm() != mode {
			t.Errorf("copy of %s: %q mode %v, want %q mode %v", name, data, info.Mode().Perm(), "content of "+name, mode)
		}
	}
	empty := t.TempDir()
	if err := copyDir(empty, filepath.Join(dst, "empty")); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("copyDir of an empty folder: err = %v, want it named empty", err)
	}
}
