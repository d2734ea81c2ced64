package modlicense

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local"
	"github.com/go-enry/go-license-detector/v4/licensedb"
	"github.com/go-enry/go-license-detector/v4/licensedb/filer"
	"github.com/rs/zerolog"
)

// Detector finds the licence declared by the licence files in dir, the
// folder of module at version. A Result with an empty ID and Note means
// no licence was found; an error, that the folder could not be read.
type Detector func(module, version, dir string) (Result, error)

// knownTexts are licence files recognised by their SHA-256 before the
// detector runs, because go-license-detector v4.3.0 misreads them. Each
// entry is dropped once the detector reads its text right:
// TestKnownTextsStillMisread fails then.
var knownTexts = map[string]struct{ id, name string }{
	// The Go project's BSD-3-Clause text since 2024 ("Neither the name of
	// Google LLC"): GOROOT/LICENSE and every golang.org/x module's. The
	// detector takes it for BSD-Source-Code (confidence 0.88, over the
	// 0.85 threshold), a licence without the binary-form clause; the
	// "Google Inc." text before it is read as BSD-3-Clause.
	"911f8f5782931320f5b8d1160a76365b83aea6447ee6c04fa6d5591467db9dad": {"BSD-3-Clause", "the Go project's licence"},
}

// confusable are answers of the detector that it also gives for a more
// common licence whose text differs by a clause that matters: it answers
// 0BSD for the ISC text (which 0BSD is, less the notice requirement) and
// BSD-Source-Code for BSD-3-Clause texts naming an LLC. An SBOM that
// claimed them would say a module may be used without conditions it has,
// so they are reported as not found, with why.
var confusable = map[string]string{
	"0BSD":            "ISC",
	"BSD-Source-Code": "BSD-3-Clause",
}

// minConfidence is cyclonedx-gomod's threshold (its local detector's
// minDetectionConfidence, unexported), which perFile applies too.
const minConfidence = 0.85

// CycloneDX returns cyclonedx-gomod's local detector (go-license-detector:
// the best match among the folder's licence files, or its README for want
// of one, if its confidence is at least 0.85), after knownTexts, less the
// confusable answers, and with every licence of a folder whose licence
// files declare different ones (perFile). It logs nothing: what it would
// log at debug level (each match's confidence) is not kept.
func CycloneDX() Detector {
	d := local.NewDetector(zerolog.Nop())
	return func(module, version, dir string) (Result, error) {
		if known, ok, err := knownText(dir); err != nil || ok {
			return known, err
		}
		licenses, err := d.Detect(module, version, dir)
		if err != nil {
			return Result{}, err
		}
		switch len(licenses) {
		case 0:
			return Result{}, nil
		case 1:
		default:
			// The local detector returns its best match only; several
			// would be a change of its contract to look at, not to pick
			// from.
			return Result{}, fmt.Errorf("the detector matched %d licences, want at most one", len(licenses))
		}
		if r, ok := distrust(licenses[0].ID); !ok {
			return r, nil
		}
		files, err := perFile(dir)
		if err != nil {
			return Result{}, err
		}
		return several(licenses[0].ID, files), nil
	}
}

// distrust turns a confusable answer into a Result that says why it is
// not kept.
func distrust(id string) (Result, bool) {
	like, ok := confusable[id]
	if !ok {
		return Result{ID: id}, true
	}
	return Result{Note: fmt.Sprintf("the detector answered %s, which it also answers for %s texts: not trusted", id, like)}, false
}

// perFile is the licence each licence file of dir declares: the best
// match of that file at cyclonedx-gomod's threshold, ties going to the
// first licence in name order, as cyclonedx-gomod breaks them. It asks
// go-license-detector itself, whose answer keeps the file each match was
// read from; cyclonedx-gomod's keeps the best match of the folder only.
func perFile(dir string) (map[string]string, error) {
	fl, err := filer.FromDirectory(dir)
	if err != nil {
		return nil, err
	}
	matches, err := licensedb.Detect(fl)
	if errors.Is(err, licensedb.ErrNoLicenseFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type match struct {
		id         string
		confidence float32
	}
	best := map[string]match{}
	for _, id := range slices.Sorted(maps.Keys(matches)) {
		for file, confidence := range matches[id].Files {
			if b, ok := best[file]; confidence >= minConfidence && (!ok || confidence > b.confidence) {
				best[file] = match{id, confidence}
			}
		}
	}
	files := map[string]string{}
	for file, m := range best {
		files[file] = m.id
	}
	return files, nil
}

// several is the Result of a folder whose best match is id and whose
// licence files declare files: id alone when they agree, else every
// licence they declare, joined by AND (the folder's code and documents
// come under all of them, as pkg.go.dev lists them all), or nothing when
// one of them is confusable.
func several(id string, files map[string]string) Result {
	ids := map[string]bool{id: true}
	var each []string
	for _, file := range slices.Sorted(maps.Keys(files)) {
		ids[files[file]] = true
		each = append(each, file+" "+files[file])
	}
	if len(ids) == 1 {
		return Result{ID: id}
	}
	all := slices.Sorted(maps.Keys(ids))
	for _, id := range all {
		if r, ok := distrust(id); !ok {
			return r
		}
	}
	return Result{ID: strings.Join(all, " AND "), Note: "licence files " + strings.Join(each, ", ")}
}

// knownText looks dir's LICENSE file up in knownTexts.
func knownText(dir string) (Result, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	if errors.Is(err, fs.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	sum := sha256.Sum256(data)
	known, ok := knownTexts[hex.EncodeToString(sum[:])]
	if !ok {
		return Result{}, false, nil
	}
	return Result{ID: known.id, Note: "LICENSE is " + known.name + " (recognised by its SHA-256: the detector misreads it)"}, true, nil
}
