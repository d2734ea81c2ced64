package modlicense

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/github/go-spdx/v2/spdxexp"
	"golang.org/x/mod/module"
)

// Result is what a Finder knows of one module's licence.
type Result struct {
	// ID is the SPDX licence identifier of the licence the module's
	// licence file declares, or an expression (A AND B) when its licence
	// files declare several; "" when none was found.
	ID string
	// Note says why ID is empty, or qualifies it. It names no local path
	// (the module cache and GOROOT are "$GOMODCACHE" and "$GOROOT"), so an
	// SBOM that carries it is the same on every machine.
	Note string
}

// Finder looks licences up in a module cache and a Go toolchain, each
// module@version once.
type Finder struct {
	modCache, goroot string
	detect           Detector

	mu      sync.Mutex
	lookups map[string]*lookup
}

// lookup is one module@version's result, computed once. The Finder's lock
// only guards the map: a slow detection holds up the callers asking for the
// same module, not every caller.
type lookup struct {
	once   sync.Once
	result Result
}

// New returns a Finder over the module cache modCache (`go env
// GOMODCACHE`) and the Go toolchain goroot (`go env GOROOT`) of the build
// that linked the binaries, matching licence texts with detect
// (CycloneDX() but in tests).
func New(modCache, goroot string, detect Detector) (*Finder, error) {
	for name, dir := range map[string]string{"module cache": modCache, "GOROOT": goroot} {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("licence finder: the %s %q is not an absolute path", name, dir)
		}
	}
	if detect == nil {
		return nil, errors.New("licence finder: no detector")
	}
	return &Finder{
		modCache: filepath.Clean(modCache), goroot: filepath.Clean(goroot),
		detect: detect, lookups: map[string]*lookup{},
	}, nil
}

// Module returns the licence of module path at version, read from its
// folder in the module cache. For a module go.mod replaces, pass the
// replacement: that is the code linked. A replacement by a local folder
// has no version and so no module cache folder: its Result says so.
func (f *Finder) Module(path, version string) Result {
	return f.once(path+"@"+version, func() Result {
		if version == "" {
			return Result{Note: "no version (a replacement by a local folder): no module cache folder to read"}
		}
		escPath, err := module.EscapePath(path)
		if err != nil {
			return Result{Note: fmt.Sprintf("no module cache folder: %v", err)}
		}
		escVersion, err := module.EscapeVersion(version)
		if err != nil {
			return Result{Note: fmt.Sprintf("no module cache folder: %v", err)}
		}
		return f.detectIn(path, version, filepath.Join(f.modCache, filepath.FromSlash(escPath)+"@"+escVersion), "the module cache")
	})
}

// Stdlib returns the licence of the Go standard library, read from the
// toolchain's GOROOT. goVersion is the binaries' toolchain (go1.25.3);
// when GOROOT's VERSION says otherwise the Result's Note says so, as the
// licence was read from another release.
func (f *Finder) Stdlib(goVersion string) Result {
	return f.once("stdlib@"+goVersion, func() Result {
		r := f.detectIn("std", goVersion, f.goroot, "GOROOT")
		if r.ID == "" {
			return r
		}
		switch have := f.gorootVersion(); have {
		case goVersion:
		case "":
			r.Note = joinNotes(r.Note, fmt.Sprintf("read from a Go toolchain of unknown version ($GOROOT/VERSION unreadable), not necessarily the binaries' %s", goVersion))
		default:
			r.Note = joinNotes(r.Note, fmt.Sprintf("read from the Go toolchain %s, not the binaries' %s", have, goVersion))
		}
		return r
	})
}

func (f *Finder) once(key string, find func() Result) Result {
	f.mu.Lock()
	l, ok := f.lookups[key]
	if !ok {
		l = &lookup{}
		f.lookups[key] = l
	}
	f.mu.Unlock()
	l.once.Do(func() { l.result = find() })
	return l.result
}

func (f *Finder) detectIn(module, version, dir, where string) Result {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Result{Note: "not in " + where}
	case err != nil:
		return Result{Note: "unreadable in " + where + ": " + f.clean(err)}
	case !fi.IsDir():
		return Result{Note: "not a folder in " + where}
	}
	r, err := f.detect(module, version, dir)
	if err != nil {
		return Result{Note: "licence detection failed: " + f.clean(err)}
	}
	if r.ID == "" {
		if r.Note == "" {
			r.Note = "no licence detected: no licence file, or none matched with enough confidence"
		}
		return r
	}
	// A detector's answer goes into SPDX's licenseDeclared verbatim, so it
	// must be an SPDX licence expression over the SPDX licence list
	// (go-spdx's copy): a LicenseRef- would need its text in the document.
	if ok, _ := spdxexp.ValidateLicensesWithOptions([]string{r.ID}, spdxexp.ValidateLicensesOptions{
		FailAllLicenseRefs: true, FailAllDocumentRefs: true,
	}); !ok {
		return Result{Note: fmt.Sprintf("the detector answered %q, which is not an SPDX licence expression", r.ID)}
	}
	return r
}

// gorootVersion is the first line of GOROOT/VERSION (go1.25.3), "" when
// there is none (a toolchain built from a Git checkout).
func (f *Finder) gorootVersion() string {
	file, err := os.Open(filepath.Join(f.goroot, "VERSION"))
	if err != nil {
		return ""
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	if !s.Scan() {
		return ""
	}
	return strings.TrimSpace(s.Text())
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// clean replaces the module cache's and GOROOT's paths in an error with
// their names.
func (f *Finder) clean(err error) string {
	msg := strings.ReplaceAll(err.Error(), f.modCache, "$GOMODCACHE")
	return strings.ReplaceAll(msg, f.goroot, "$GOROOT")
}
