// Package modlicense finds the licence a Go module declares: the SPDX
// identifier of the licence file in the module's folder of the module cache
// (or, for the standard library, in the Go toolchain's GOROOT), for the
// SBOMs of holdfast's images (internal/pipeline/image).
//
// The text is matched by cyclonedx-gomod's local detector
// (github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local), which runs
// go-enry's go-license-detector over the folder's licence files (and, for
// want of one, its README) and keeps the best match only when its
// confidence is at least 0.85: what `cyclonedx-gomod -licenses` reports,
// from a maintained detector whose database is the SPDX licence list.
// holdfast writes no matcher of its own. It does correct the detector
// where it is known to be wrong on texts common in Go binaries, both
// narrowly (detector.go): one exact text recognised by its digest (the Go
// project's BSD-3-Clause licence, read as BSD-Source-Code) and two answers
// not trusted (0BSD, given for ISC; BSD-Source-Code). A wrong licence in
// an SBOM is worse than none: the first makes a claim, the second says
// that nothing is claimed.
//
// The detector names one licence, its best match in the folder. Where the
// folder holds several licence files declaring different licences (code
// under LICENSE, documentation under LICENSE.docs; a LICENSE.libyaml for
// carried code), go-license-detector is asked for each file's best match
// and the Result is all of them, joined by AND. A single file holding
// several licence texts is still declared under its best match only.
//
// Lookups are offline: the module cache is filled by the build that linked
// the binaries, and a module not in it is reported, not downloaded. A
// Finder looks each module@version up once and is safe for concurrent use;
// a module whose licence is not found is a Result with an empty ID and the
// reason, never an error, so one odd module never fails an SBOM.
package modlicense
