package modlicense_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense"
	"github.com/holdfast-dist/holdfast/internal/supplychain/modlicense/modlicensetest"
)

// text is a licence text of modlicensetest.
func text(t *testing.T, name string) []byte {
	t.Helper()
	data, err := modlicensetest.Text(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeDir makes dir with files (name -> content).
func writeDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeGo is a module cache and a GOROOT (go1.99.1) holding the modules of
// the tests.
func fakeGo(t *testing.T) (modCache, goroot string) {
	t.Helper()
	modCache, goroot, err := modlicensetest.WriteGo(t.TempDir(), "go1.99.1",
		modlicensetest.Module{Path: "example.com/apache", Version: "v1.0.0", License: "Apache-2.0"},
		modlicensetest.Module{Path: "example.com/bsd/v3", Version: "v3.1.0-RC1", License: "BSD-3-Clause"},
		modlicensetest.Module{Path: "golang.org/x/mod", Version: "v0.31.0", License: "Go"},
		modlicensetest.Module{Path: "example.com/isc", Version: "v1.0.0", License: "ISC"},
		modlicensetest.Module{Path: "example.com/unlicensed", Version: "v1.0.0"},
	)
	if err != nil {
		t.Fatal(err)
	}
	// Another licence file name than LICENSE, and a path and version with
	// upper case, which the module cache escapes as !lower.
	writeDir(t, filepath.Join(modCache, "github.com", "!upper!case", "mit@v2.0.0+incompatible"), map[string][]byte{"LICENSE.md": text(t, "MIT")})
	// Several licence files (code and documents, say), declaring
	// different licences; and the same with one of them confusable.
	writeDir(t, filepath.Join(modCache, "example.com", "two@v1.0.0"), map[string][]byte{"LICENSE": text(t, "Apache-2.0"), "LICENSE.docs": text(t, "MIT")})
	writeDir(t, filepath.Join(modCache, "example.com", "twoisc@v1.0.0"), map[string][]byte{"LICENSE": text(t, "Apache-2.0"), "LICENSE-ISC": text(t, "ISC")})
	return modCache, goroot
}

func newFinder(t *testing.T, detect modlicense.Detector) *modlicense.Finder {
	t.Helper()
	modCache, goroot := fakeGo(t)
	f, err := modlicense.New(modCache, goroot, detect)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFinder runs the real detector (cyclonedx-gomod's, go-license-detector
// underneath) on canonical licence texts in a made-up module cache.
func TestFinder(t *testing.T) {
	f := newFinder(t, modlicense.CycloneDX())
	for _, c := range []struct {
		path, version string
		id, note      string // note: a part of the Note, "" for none
	}{
		{"example.com/apache", "v1.0.0", "Apache-2.0", ""},
		{"github.com/UpperCase/mit", "v2.0.0+incompatible", "MIT", ""},
		{"example.com/bsd/v3", "v3.1.0-RC1", "BSD-3-Clause", ""},
		{"golang.org/x/mod", "v0.31.0", "BSD-3-Clause", "the Go project's licence"},
		{"example.com/isc", "v1.0.0", "", "the detector answered 0BSD, which it also answers for ISC texts: not trusted"},
		{"example.com/two", "v1.0.0", "Apache-2.0 AND MIT", "licence files LICENSE Apache-2.0, LICENSE.docs MIT"},
		{"example.com/twoisc", "v1.0.0", "", "the detector answered 0BSD, which it also answers for ISC texts: not trusted"},
		{"example.com/unlicensed", "v1.0.0", "", "no licence detected"},
		{"example.com/apache", "v1.0.1", "", "not in the module cache"},
		{"example.com/local", "", "", "a replacement by a local folder"},
		{"Example.com/bad path", "v1.0.0", "", "no module cache folder: malformed module path"},
	} {
		got := f.Module(c.path, c.version)
		if got.ID != c.id || (c.note == "") != (got.Note == "") || !strings.Contains(got.Note, c.note) {
			t.Errorf("Module(%s, %s) = %+v, want ID %q and a note with %q", c.path, c.version, got, c.id, c.note)
		}
		if strings.Contains(got.Note, os.TempDir()) {
			t.Errorf("Module(%s, %s): note %q names a local path", c.path, c.version, got.Note)
		}
	}

	if got := f.Stdlib("go1.99.1"); got.ID != "BSD-3-Clause" || strings.Contains(got.Note, "not the binaries'") {
		t.Errorf("Stdlib(go1.99.1) = %+v, want BSD-3-Clause", got)
	}
	if got := f.Stdlib("go1.98.0"); got.ID != "BSD-3-Clause" || !strings.Contains(got.Note, "read from the Go toolchain go1.99.1, not the binaries' go1.98.0") {
		t.Errorf("Stdlib(go1.98.0) = %+v, want BSD-3-Clause noting the toolchain read", got)
	}
}

// TestKnownTextsStillMisread keeps knownTexts and confusable honest: each
// must correct an answer the detector still gets wrong, else it goes.
func TestKnownTextsStillMisread(t *testing.T) {
	raw := modlicense.RawCycloneDX()
	for file, misread := range map[string]string{"Go": "BSD-Source-Code", "ISC": "0BSD"} {
		dir := t.TempDir()
		writeDir(t, dir, map[string][]byte{"LICENSE": text(t, file)})
		got, err := raw("example.com/m", "v1.0.0", dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != misread {
			t.Errorf("cyclonedx-gomod's detector now reads %s as %q, not %s: drop its correction in detector.go", file, got.ID, misread)
		}
	}
}

func TestFinderRejectsWhatIsNotAnSPDXIdentifier(t *testing.T) {
	answer := func(id string) modlicense.Detector {
		return func(_, _, _ string) (modlicense.Result, error) { return modlicense.Result{ID: id}, nil }
	}
	for id, want := range map[string]string{
		"Apache-2.0":                  "Apache-2.0",
		"Apache-2.0 AND CC-BY-SA-4.0": "Apache-2.0 AND CC-BY-SA-4.0",
		"Made-Up-1.0":                 "",
		"MIT AND Made-Up-1.0":         "",
		"LicenseRef-Proprietary":      "",
		"DocumentRef-x:LicenseRef-y":  "",
	} {
		got := newFinder(t, answer(id)).Module("example.com/apache", "v1.0.0")
		if got.ID != want || (want == "" && !strings.Contains(got.Note, "not an SPDX licence expression")) {
			t.Errorf("detector answering %q: %+v, want ID %q", id, got, want)
		}
	}
}

func TestFinderDetectorErrorNamesNoPath(t *testing.T) {
	f := newFinder(t, func(_, _, dir string) (modlicense.Result, error) {
		return modlicense.Result{}, errors.New("cannot read file " + filepath.Join(dir, "LICENSE"))
	})
	got := f.Module("example.com/apache", "v1.0.0")
	if got.ID != "" || got.Note != "licence detection failed: cannot read file $GOMODCACHE/example.com/apache@v1.0.0/LICENSE" {
		t.Errorf("got %+v", got)
	}
}

// TestFinderLooksUpOnce asks for the same modules from many goroutines
// (run with -race): each module@version is detected once.
func TestFinderLooksUpOnce(t *testing.T) {
	var calls sync.Map
	f := newFinder(t, func(module, version, dir string) (modlicense.Result, error) {
		n, _ := calls.LoadOrStore(module+"@"+version, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return modlicense.Result{ID: "MIT"}, nil
	})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range []string{"example.com/apache", "example.com/isc", "example.com/unlicensed"} {
				if got := f.Module(m, "v1.0.0"); got.ID != "MIT" {
					t.Errorf("Module(%s) = %+v", m, got)
				}
			}
			f.Stdlib("go1.99.1")
		}()
	}
	wg.Wait()
	n := 0
	calls.Range(func(key, value any) bool {
		n++
		if c := value.(*atomic.Int32).Load(); c != 1 {
			t.Errorf("%s detected %d times, want once", key, c)
		}
		return true
	})
	if n != 4 {
		t.Errorf("%d modules detected, want 4 (3 modules and the standard library)", n)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		modCache, goroot string
		detect           modlicense.Detector
		want             string
	}{
		{"mod", "/go", modlicense.CycloneDX(), `the module cache "mod" is not an absolute path`},
		{"/mod", "", modlicense.CycloneDX(), `the GOROOT "" is not an absolute path`},
		{"/mod", "/go", nil, "no detector"},
	} {
		if _, err := modlicense.New(c.modCache, c.goroot, c.detect); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q): %v, want %q", c.modCache, c.goroot, err, c.want)
		}
	}
}
