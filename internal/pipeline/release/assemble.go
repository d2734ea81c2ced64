package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/fscopy"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
)

// DefaultOut is where release folders are written, one per version.
const DefaultOut = "_output/release"

// Inputs are the folders the earlier steps wrote to.
type Inputs struct {
	Bin     string // _output/bin: <upstream>-<version>/ per default pin
	Images  string // _output/images
	Charts  string // _output/charts
	Reports string // _output/reports: test-<upstream>-<version>.json, e2e.json
}

// DefaultInputs are the folders under root the Makefile's steps use.
func DefaultInputs(root string) Inputs {
	return Inputs{
		Bin:     filepath.Join(root, build.DefaultOut),
		Images:  filepath.Join(root, "_output", "images"),
		Charts:  filepath.Join(root, "_output", "charts"),
		Reports: filepath.Join(root, "_output", "reports"),
	}
}

// Options say what to release.
type Options struct {
	Version string
	Source  build.Source
	Shipped []Shipped
	Inputs  Inputs
	// Out receives Version/.
	Out string
	// Checks are further gates run before anything is written, each
	// returning an error that names what is wrong (images or charts built
	// from another commit, say).
	Checks []func() error
	// Preflight stops after the checks that need no artifact (version,
	// clean checkout, destination free), so `make release` can refuse
	// before a long build rather than after it.
	Preflight bool
	// Signing signs the images, charts, provenance and CHECKSUMS. A
	// release without it is refused unless Unsigned says it is meant to be
	// (a rehearsal: the notes then say it is unsigned).
	Signing  *Signing
	Unsigned bool
	// Vulnerabilities scans the staged binaries and writes the report
	// folder into the release (vulnreport.WriteReport), returning the notes'
	// section. Required: a release names the known vulnerabilities of what
	// it ships.
	Vulnerabilities func(ctx context.Context, stage string, bins []vulnreport.Binary) (string, error)
	Log             io.Writer
}

// ErrRefused wraps every reason Assemble gives for not writing a release.
var ErrRefused = errors.New("release refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Assemble checks the gates, then writes Out/Version and returns its path.
func Assemble(ctx context.Context, o Options) (string, error) {
	if err := CheckVersion(o.Version); err != nil {
		return "", refuse("%v", err)
	}
	switch o.Source.TreeState {
	case "clean":
	case "dirty":
		return "", refuse("the holdfast checkout has uncommitted changes (git status --porcelain is not empty): commit them so the release names the commit it was built from")
	default:
		return "", refuse("cannot tell the holdfast commit (not a git checkout?): a release must name the commit it was built from")
	}
	dest := filepath.Join(o.Out, o.Version)
	if _, err := os.Stat(dest); err == nil {
		return "", refuse("%s already exists: a release folder is never rewritten; remove it or choose another VERSION", dest)
	}
	switch {
	case o.Signing == nil && !o.Unsigned:
		return "", refuse("no signing key: set SIGNING_KEY=cosign.key (or a KMS URI) or SIGNING=keyless; UNSIGNED=1 makes an unsigned rehearsal (docs/release.md#signing)")
	case o.Signing != nil && o.Unsigned:
		return "", refuse("both a signing configuration and unsigned were asked for")
	case o.Signing != nil:
		if err := o.Signing.Signer.Validate(); err != nil {
			return "", refuse("%v", err)
		}
		if err := checkPublishedKey(o.Signing); err != nil {
			return "", err
		}
	}
	if o.Vulnerabilities == nil {
		return "", refuse("no vulnerability scan configured")
	}
	if o.Preflight {
		return dest, nil
	}
	if err := checkTestReports(o); err != nil {
		return "", err
	}
	e2e, err := readE2E(o)
	if err != nil {
		return "", err
	}
	for _, check := range o.Checks {
		if err := check(); err != nil {
			return "", refuse("%v", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}

	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(o.Out, "."+o.Version+".partial-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage) // gone after the rename; cleans up after a failure
	if err := os.Chmod(stage, 0o755); err != nil {
		return "", err
	}
	artifacts, err := collect(o, stage)
	if err != nil {
		return "", err
	}
	// Read from the copies: the notes name exactly what the release ships.
	var images []imagebuild.Digests
	for _, s := range o.Shipped {
		d, err := imagebuild.ReadAllDigests(filepath.Join(stage, "images"), s.Upstream, s.Pin)
		if err != nil {
			return "", refuse("%s %s: %v (run `make images`)", s.Upstream.Name, s.Pin.Version, err)
		}
		images = append(images, d...)
	}
	var bins []vulnreport.Binary
	for _, sh := range o.Shipped {
		for _, pkg := range sh.Upstream.Build {
			bins = append(bins, vulnreport.Binary{
				Path:        filepath.Join(stage, "bin", sh.Upstream.Name+"-"+sh.Pin.Version, sh.Upstream.BinaryName(pkg)),
				MainVersion: sh.Pin.Version,
			})
		}
	}
	logf(o.Log, "scanning %d binaries for known vulnerabilities (govulncheck)", len(bins))
	vulns, err := o.Vulnerabilities(ctx, stage, bins)
	if err != nil {
		return "", fmt.Errorf("vulnerability report: %w", err)
	}
	artifacts = append(artifacts, Artifact{"vulnerabilities", vulnreport.FolderName + "/", "govulncheck's report on every shipped binary (offline vulndb snapshot); summary in " + vulnreport.FolderName + "/" + vulnreport.SummaryFile})
	verifying := "## Verifying\n\nThis release is **not signed** (an unsigned rehearsal: `UNSIGNED=1`). Do not publish it.\n"
	if o.Signing != nil {
		if verifying, err = sign(ctx, o, stage, images); err != nil {
			return "", err
		}
		artifacts = append(artifacts,
			Artifact{"provenance", ProvenanceFile, "SLSA v1 provenance (in-toto statement) naming every file and image of the release; signed in " + ProvenanceBundle},
			Artifact{"attestations", attestationsDir + "/", "the SLSA provenance predicates attached to the images (with their SPDX and CycloneDX SBOMs and " + vulnreport.FolderName + "/" + vulnreport.VEXFile + ") as cosign attestations"},
		)
	}
	notes := Notes{Version: o.Version, Source: o.Source, Shipped: o.Shipped, Artifacts: artifacts, Images: images, E2E: e2e, Verifying: verifying, Vulnerabilities: vulns}
	if err := os.WriteFile(filepath.Join(stage, "RELEASE-NOTES.md"), notes.Markdown(), 0o644); err != nil {
		return "", err
	}
	sums, err := Checksums(stage)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(stage, ChecksumsFile), sums, 0o644); err != nil {
		return "", err
	}
	// Last: the bundle signs CHECKSUMS, which names every other file.
	if o.Signing != nil {
		if _, err := o.Signing.Signer.SignBlob(ctx, filepath.Join(stage, ChecksumsFile)); err != nil {
			return "", err
		}
	}
	if err := os.Rename(stage, dest); err != nil {
		return "", err
	}
	return dest, nil
}

// checkTestReports requires, for every shipped pin, the upstream-test report
// of this commit saying RED on pristine, GREEN on patched, upstream tests
// passing.
func checkTestReports(o Options) error {
	for _, s := range o.Shipped {
		name := filepath.Join(o.Inputs.Reports, "test-"+s.Upstream.Name+"-"+s.Pin.Version+".json")
		data, err := os.ReadFile(name)
		if err != nil {
			return refuse("no upstream-test report for %s %s (%v): run `make upstream-test`", s.Upstream.Name, s.Pin.Version, err)
		}
		var results []*treetest.Result
		if err := json.Unmarshal(data, &results); err != nil {
			return refuse("%s: %v", name, err)
		}
		if len(results) != 1 || results[0].Version != s.Pin.Version {
			return refuse("%s: expected one result for %s %s", name, s.Upstream.Name, s.Pin.Version)
		}
		r := results[0]
		if !r.OK() {
			return refuse("%s: %s %s: %s", name, s.Upstream.Name, s.Pin.Version, r.Verdict())
		}
		if r.HoldfastCommit != o.Source.Commit {
			return refuse("%s was written by holdfast commit %q, not %s: run the tests again", name, r.HoldfastCommit, o.Source.Commit)
		}
		// The same commit with edited tests or patches is another series:
		// only a report of the clean checkout speaks for this commit.
		if r.HoldfastTreeState != "clean" {
			return refuse("%s was written from a holdfast checkout with uncommitted changes (tree %q) at %s: commit them and run `make upstream-test` again", name, r.HoldfastTreeState, o.Source.Commit)
		}
	}
	return nil
}

// collect copies the artifacts into the staging folder and describes them.
func collect(o Options, stage string) ([]Artifact, error) {
	var arts []Artifact
	for _, s := range o.Shipped {
		name := s.Upstream.Name + "-" + s.Pin.Version
		src := filepath.Join(o.Inputs.Bin, name)
		platform, err := build.VerifyBinaries(src, s.Upstream, s.Pin, s.SeriesHash)
		if err != nil {
			return nil, refuse("%v (run `make binaries`)", err)
		}
		if err := copyDir(src, filepath.Join(stage, "bin", name)); err != nil {
			return nil, fmt.Errorf("binaries of %s %s: %w (run `make binaries`)", s.Upstream.Name, s.Pin.Version, err)
		}
		arts = append(arts, Artifact{"binaries", "bin/" + name + "/", fmt.Sprintf("%s binaries (static, %s)", s.Pin.VersionString(), platform)})
	}
	if err := copyDir(o.Inputs.Images, filepath.Join(stage, "images")); err != nil {
		return nil, fmt.Errorf("images: %w (run `make images`)", err)
	}
	arts = append(arts, Artifact{"images", "images/", "OCI image layouts, docker-loadable tarballs, SPDX and CycloneDX SBOMs"})
	charts, err := filepath.Glob(filepath.Join(o.Inputs.Charts, "*.tgz"))
	if err != nil {
		return nil, err
	}
	if len(charts) == 0 {
		return nil, fmt.Errorf("no charts in %s (run `make charts`)", o.Inputs.Charts)
	}
	sort.Strings(charts)
	for _, c := range charts {
		if err := copyFile(c, filepath.Join(stage, "charts", filepath.Base(c))); err != nil {
			return nil, err
		}
		arts = append(arts, Artifact{"chart", "charts/" + filepath.Base(c), strings.TrimSuffix(filepath.Base(c), ".tgz")})
	}
	reports := []string{"e2e.md", "e2e.json"}
	// e2e.md links the rotation timings e2e-report draws beside it; the
	// release's copy must not link pictures it lacks.
	timelines, err := filepath.Glob(filepath.Join(o.Inputs.Reports, e2ereport.TimelinePrefix+"*.svg"))
	if err != nil {
		return nil, err
	}
	sort.Strings(timelines)
	for _, t := range timelines {
		reports = append(reports, filepath.Base(t))
	}
	for _, s := range o.Shipped {
		base := "test-" + s.Upstream.Name + "-" + s.Pin.Version
		reports = append(reports, base+".md", base+".json")
	}
	for _, r := range reports {
		if err := copyFile(filepath.Join(o.Inputs.Reports, r), filepath.Join(stage, "reports", r)); err != nil {
			return nil, err
		}
	}
	arts = append(arts, Artifact{"reports", "reports/", "upstream-test (RED on pristine, GREEN on patched) and end-to-end reports"})
	return arts, nil
}

// copyDir copies a folder of plain files; a missing source is an error
// because every input of a release is required.
func copyDir(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	files, err := fscopy.Tree(dst, src, fscopy.Options{NoReplace: true})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s is empty", src)
	}
	return nil
}

// copyFile streams one file: image tarballs are large.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return out.Close()
}
