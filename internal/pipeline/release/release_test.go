package release

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild/imagebuildtest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/overrides"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
	"github.com/holdfast-dist/holdfast/internal/supplychain/vulnreport"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v       string
		wantErr string
	}{
		{"v1.0.0", ""},
		{"v2026.12.0", ""},
		{"v1.0.0-rc.1", ""},
		{"", "empty"},
		{"1.0.0", "not of the form"},
		{"v1.0", "not of the form"},
		{"v1.0.0+build.1", "build metadata"},
		{"v1.0.0 ", "not of the form"},
	} {
		err := CheckVersion(tc.v)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckVersion(%q) = %v, want error containing %q", tc.v, err, tc.wantErr)
		}
	}
}

// repoRoot is the holdfast checkout these tests run in: the notes are
// tested on the real series headers.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func shipped(t *testing.T) []Shipped {
	t.Helper()
	root := repoRoot(t)
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadShipped(root, f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNotesListEveryCarriedPatch(t *testing.T) {
	s := shipped(t)
	md := string(Notes{Version: "v1.0.0", Source: build.Source{Commit: commit, Date: time.Unix(0, 0)}, Shipped: s}.Markdown())
	n := 0
	for _, sh := range s {
		if !strings.Contains(md, "### "+sh.Upstream.Name+" "+sh.Pin.Version) {
			t.Errorf("notes have no section for %s %s", sh.Upstream.Name, sh.Pin.Version)
		}
		for _, p := range sh.Series {
			n++
			row := ""
			for _, line := range strings.Split(md, "\n") {
				if strings.HasPrefix(line, "| `"+p.Name()+"`") {
					row = line
				}
			}
			if row == "" {
				t.Errorf("no row for %s", p.Name())
				continue
			}
			for _, want := range []string{cell(p.Header.UpstreamIssue), cell(p.Header.UpstreamPR), cell(p.Header.DropWhen)} {
				if !strings.Contains(row, want) {
					t.Errorf("row for %s lacks %q:\n%s", p.Name(), want, row)
				}
			}
			if cells := strings.Count(row, " | "); cells != 6 {
				t.Errorf("row for %s has %d cell separators, want 6 (a '|' or newline leaked from a header):\n%s", p.Name(), cells, row)
			}
		}
	}
	if n < 4 {
		t.Fatalf("only %d patches found in the shipped series", n)
	}
}

func TestChecksumsVerifyWithSha256sum(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a.txt": "a\n", "sub/b.bin": "\x00\x01", "CHECKSUMS": "stale"} {
		writeFile(t, filepath.Join(dir, name), data)
	}
	sums, err := Checksums(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sums), "CHECKSUMS") {
		t.Errorf("CHECKSUMS lists itself:\n%s", sums)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  a.txt") || !strings.HasSuffix(lines[1], "  sub/b.bin") {
		t.Errorf("checksums not sorted by path or wrong set:\n%s", sums)
	}
	writeFile(t, filepath.Join(dir, ChecksumsFile), string(sums))
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum to cross-check the format")
	}
	cmd := exec.Command("sha256sum", "-c", "--strict", ChecksumsFile)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Checksums(dir); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a symlink in a release: err = %v, want one naming it", err)
	}
}

// fixture lays out what the earlier steps of `make release` write.
type fixture struct {
	opts Options
	// digests are the index digests of the stand-in images, by binary.
	digests map[string]v1.Hash
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	s := shipped(t)
	in := DefaultInputs(dir)
	digests := map[string]v1.Hash{}
	for _, sh := range s {
		d, err := imagebuildtest.WriteImages(in.Images, sh.Upstream, sh.Pin, commit, nil)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(digests, d)
		name := sh.Upstream.Name + "-" + sh.Pin.Version
		for _, pkg := range sh.Upstream.Build {
			copyBinary(t, stampedBinary(t, sh), filepath.Join(in.Bin, name, sh.Upstream.BinaryName(pkg)))
		}
		r := []*treetest.Result{{
			Upstream: sh.Upstream.Name, Version: sh.Pin.Version, Pristine: treetest.Red, Patched: treetest.Green,
			UpstreamPass: true, HoldfastCommit: commit, HoldfastTreeState: "clean",
			Plan:  treetest.Plan{RegressionTests: []string{"TestX"}},
			Fixes: []treetest.FixResult{{Fix: "fix-x", Patches: []string{"0001-x.patch"}, Tests: []treetest.TestResult{{Name: "TestX", Pristine: treetest.Red, Patched: treetest.Green}}}},
		}}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(in.Reports, "test-"+name+".json"), string(data))
		writeFile(t, filepath.Join(in.Reports, "test-"+name+".md"), "report")
	}
	writeFile(t, filepath.Join(in.Charts, "worker-operator-1.6.4-holdfast.1.tgz"), "chart")
	writeFile(t, filepath.Join(in.Reports, "e2e.md"), "| suite | scenario |\n")
	writeFile(t, filepath.Join(in.Reports, e2ereport.TimelinePrefix+"karmada-control-plane-rotation.svg"), "<svg/>")
	writeE2E(t, in.Reports, func(*e2ereport.Report) {})
	return &fixture{opts: Options{
		Version: "v1.0.0",
		Source:  build.Source{Commit: commit, ShortCommit: commit[:12], TreeState: "clean", Date: time.Unix(1764672000, 0)},
		Shipped: s, Inputs: in, Out: filepath.Join(dir, "_output", "release"),
		// Signing with the real cosign and the scan with the real
		// govulncheck: release_e2e_test.go.
		Unsigned:        true,
		Vulnerabilities: standinVulnerabilities,
	}, digests: digests}
}

func TestAssembleRefusesAnUnsignedReleaseUnlessAsked(t *testing.T) {
	f := newFixture(t)
	f.opts.Unsigned = false
	for _, preflight := range []bool{true, false} {
		f.opts.Preflight = preflight
		_, err := Assemble(context.Background(), f.opts)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "SIGNING_KEY") {
			t.Errorf("preflight=%t: err = %v, want a refusal naming SIGNING_KEY", preflight, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.opts.Out, f.opts.Version)); !os.IsNotExist(err) {
		t.Errorf("a refused release left %s: %v", f.opts.Version, err)
	}
	f.opts.Preflight, f.opts.Unsigned = false, true
	dir, err := Assemble(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "RELEASE-NOTES.md"))
	if !strings.Contains(string(notes), "**not signed**") {
		t.Errorf("an unsigned rehearsal's notes do not say so:\n%s", notes)
	}
}

func TestAssembleWritesAVerifiableRelease(t *testing.T) {
	f := newFixture(t)
	dir, err := Assemble(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RELEASE-NOTES.md", "CHECKSUMS", "charts/worker-operator-1.6.4-holdfast.1.tgz",
		"images/workeroperator-v1.6.4/worker-operator/index.json", "images/workeroperator-v1.6.4/worker-operator.spdx.json", "images/workeroperator-v1.6.4/worker-operator.cdx.json", "reports/e2e.md", "reports/" + e2ereport.TimelinePrefix + "karmada-control-plane-rotation.svg", "bin/karmada-v1.18.2/karmada-controller-manager"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("release lacks %s: %v", want, err)
		}
	}
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sums), "  RELEASE-NOTES.md\n") || !strings.Contains(string(sums), "  charts/worker-operator-1.6.4-holdfast.1.tgz\n") {
		t.Errorf("CHECKSUMS misses files:\n%s", sums)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "RELEASE-NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The version pins.txt gives Karmada's default pin: a revision bump
	// (a new patch in the series) must not break this test.
	var karmadaVersion string
	for _, sh := range shipped(t) {
		if sh.Upstream.Name == "karmada" && sh.Pin.Version == "v1.18.2" {
			karmadaVersion = sh.Pin.VersionString()
		}
	}
	if want := karmadaVersion + " binaries (static, " + runtime.GOOS + "/" + runtime.GOARCH + ")"; karmadaVersion == "" || !strings.Contains(string(notes), want) {
		t.Errorf("notes do not describe the binaries as %q:\n%s", want, notes)
	}
	if _, err := Assemble(context.Background(), f.opts); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second release of the same version: err = %v, want refused as existing", err)
	}
}

// TestNotesListEveryImageDigest: the notes name every image by reference,
// index digest and platform manifest digests, as the layouts hold them.
func TestNotesListEveryImageDigest(t *testing.T) {
	f := newFixture(t)
	dir, err := Assemble(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "RELEASE-NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sh := range f.opts.Shipped {
		for _, pkg := range sh.Upstream.Build {
			binary := sh.Upstream.BinaryName(pkg)
			n++
			idx, err := layout.ImageIndexFromPath(filepath.Join(f.opts.Inputs.Images, sh.Upstream.Name+"-"+sh.Pin.Version, binary))
			if err != nil {
				t.Fatal(err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if got := im.Manifests[0].Digest; got != f.digests[binary] {
				t.Fatalf("fixture: layout of %s holds %s, wrote %s", binary, got, f.digests[binary])
			}
			platforms, err := idx.ImageIndex(f.digests[binary])
			if err != nil {
				t.Fatal(err)
			}
			pm, err := platforms.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			want := "| `ghcr.io/holdfast-dist/" + binary + ":" + sh.Pin.VersionString() + "` | `" + f.digests[binary].String() + "` | "
			for i, p := range pm.Manifests {
				if i > 0 {
					want += "<br>"
				}
				want += p.Platform.OS + "/" + p.Platform.Architecture + " `" + p.Digest.String() + "`"
			}
			want += " |\n"
			if !strings.Contains(string(notes), want) {
				t.Errorf("notes lack the row\n%s\n%s", want, notes)
			}
		}
	}
	if n != 6 { // five Karmada binaries and the worker
		t.Errorf("%d images shipped, want 6", n)
	}
}

func TestPreflightChecksOnlyWhatNeedsNoArtifact(t *testing.T) {
	f := newFixture(t)
	os.RemoveAll(f.opts.Inputs.Charts) // artifacts do not exist yet before the build
	f.opts.Preflight = true
	if _, err := Assemble(context.Background(), f.opts); err != nil {
		t.Fatalf("preflight with no artifacts: %v", err)
	}
	if _, err := os.Stat(f.opts.Out); !os.IsNotExist(err) {
		t.Errorf("preflight wrote %s", f.opts.Out)
	}
	f.opts.Source.TreeState = "dirty"
	if _, err := Assemble(context.Background(), f.opts); !errors.Is(err, ErrRefused) {
		t.Errorf("preflight on a dirty checkout: err = %v, want refused", err)
	}
}

func TestAssembleRefusesAndWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(t *testing.T, o *Options)
		wantErr string
	}{
		{"dirty checkout", func(t *testing.T, o *Options) { o.Source.TreeState = "dirty" }, "uncommitted changes"},
		{"not a checkout", func(t *testing.T, o *Options) { o.Source.TreeState = "unknown" }, "cannot tell the holdfast commit"},
		{"bad version", func(t *testing.T, o *Options) { o.Version = "1.0" }, "not of the form"},
		{"pristine green", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) { r.Fixes[0].Tests[0].Pristine = treetest.Green })
		}, "patch no longer needed"},
		{"patched red", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) { r.Fixes[0].Tests[0].Patched = treetest.Red })
		}, "TestX is RED on the patched tree"},
		{"no regression test at all", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) {
				r.Pristine, r.Patched, r.Plan.RegressionTests, r.Fixes = treetest.NoTests, treetest.NoTests, nil, nil
			})
		}, "no carried fix has a regression test"},
		{"a fix without a regression test", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) {
				r.Fixes = append(r.Fixes, treetest.FixResult{Fix: "guard", Patches: []string{"0002-guard.patch"}})
			})
		}, "fix guard has no regression test"},
		{"upstream-test report of a dirty checkout", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) { r.HoldfastTreeState = "dirty" })
		}, "uncommitted changes (tree \"dirty\")"},
		{"e2e report of a dirty checkout", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) { r.HoldfastTreeState = "dirty" })
		}, "(tree dirty)"},
		{"report of another commit", func(t *testing.T, o *Options) {
			rewriteReport(t, o, func(r *treetest.Result) { r.HoldfastCommit = "feedface" })
		}, "feedface"},
		{"missing e2e report", func(t *testing.T, o *Options) {
			os.Remove(filepath.Join(o.Inputs.Reports, "e2e.json"))
		}, "make e2e"},
		{"e2e scenario not as expected", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, setRow("rotation", "pristine", e2ereport.Pass, e2ereport.RedAsExpected))
		}, "karmada-control-plane/rotation (pristine: pass, expected red-as-expected)"},
		// A suite that wrote "pass" as its pristine row's expectation (the
		// line making it RedAsExpected deleted, say) and a scenario that no
		// longer shows the bug: the catalogue, not the row, says red.
		{"e2e pristine row expecting to pass", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, setRow("ca-rotation-replaced", "pristine", e2ereport.Pass, e2ereport.Pass))
		}, "karmada-control-plane/ca-rotation-replaced (pristine: pass, and the row expects pass where e2ereport.Catalog requires red-as-expected)"},
		{"e2e control expecting red", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, setRow("repeated-restart", "pristine", e2ereport.RedAsExpected, e2ereport.RedAsExpected))
		}, "karmada-control-plane/repeated-restart (pristine: red-as-expected, and the row expects red-as-expected where e2ereport.Catalog requires pass)"},
		{"e2e suite missing", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) { r.Suites = r.Suites[:2] })
		}, "worker-own-credential"},
		{"control-plane suite missing", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) { r.Suites = slices.Delete(r.Suites, 0, 1) })
		}, "karmada-control-plane/propagation (patched)"},
		{"partial run without karmada-search", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) {
				r.Suites[0].Scenarios = slices.DeleteFunc(r.Suites[0].Scenarios, func(s e2ereport.Scenario) bool { return s.Name == "search" && s.Binary == "patched" })
			})
		}, "karmada-control-plane/search (patched)"},
		{"partial run without a pristine row", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) {
				r.Suites[0].Scenarios = slices.DeleteFunc(r.Suites[0].Scenarios, func(s e2ereport.Scenario) bool { return s.Name == "own-credential" && s.Binary == "pristine" })
			})
		}, "karmada-control-plane/own-credential (pristine)"},
		{"worker suite with one row of another name", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) {
				for i := range r.Suites {
					if r.Suites[i].Suite == "worker-hub-failover" {
						r.Suites[i].Scenarios = []e2ereport.Scenario{{Suite: "worker-hub-failover", Name: "anything", Binary: "patched", Result: e2ereport.Pass, Expected: e2ereport.Pass}}
					}
				}
			})
		}, "worker-hub-failover/a flapping claim causes no restart (patched)"},
		{"partial worker run", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) {
				for i := range r.Suites {
					if r.Suites[i].Suite == "worker-own-credential" {
						r.Suites[i].Scenarios = r.Suites[i].Scenarios[:1]
					}
				}
			})
		}, "worker-own-credential/one transient 401"},
		{"e2e of another commit", func(t *testing.T, o *Options) {
			writeE2E(t, o.Inputs.Reports, func(r *e2ereport.Report) { r.HoldfastCommit = "feedface" })
		}, "feedface"},
		{"failing extra check", func(t *testing.T, o *Options) {
			o.Checks = append(o.Checks, func() error { return errors.New("image worker-operator is of commit feedface") })
		}, "feedface"},
		{"binary of another revision", func(t *testing.T, o *Options) {
			other := o.Shipped[0]
			other.Pin.Revision++
			copyBinary(t, stampedBinary(t, other), filepath.Join(o.Inputs.Bin, "karmada-v1.18.2", "karmada-search"))
		}, "karmada-search does not carry version v1.18.2-holdfast."},
		{"missing binary", func(t *testing.T, o *Options) {
			os.Remove(filepath.Join(o.Inputs.Bin, "workeroperator-v1.6.4", "worker-operator"))
		}, "worker-operator: not a Go binary"},
		{"missing image", func(t *testing.T, o *Options) {
			os.RemoveAll(filepath.Join(o.Inputs.Images, "workeroperator-v1.6.4", "worker-operator"))
		}, "image worker-operator: no OCI layout"},
		{"image of another revision", func(t *testing.T, o *Options) {
			other := o.Shipped[0]
			other.Pin.Revision++
			os.RemoveAll(filepath.Join(o.Inputs.Images, "karmada-v1.18.2"))
			if _, err := imagebuildtest.WriteImages(o.Inputs.Images, other.Upstream, other.Pin, commit, nil); err != nil {
				t.Fatal(err)
			}
		}, "not v1.18.2-holdfast."},
		{"missing charts", func(t *testing.T, o *Options) {
			os.RemoveAll(o.Inputs.Charts)
		}, "make charts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.mutate(t, &f.opts)
			_, err := Assemble(context.Background(), f.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			entries, _ := os.ReadDir(f.opts.Out)
			for _, e := range entries {
				t.Errorf("refused release left %s behind", e.Name())
			}
		})
	}
}

// writeE2E writes an end-to-end report of every required suite, all as
// expected, then lets change spoil it.
func writeE2E(t *testing.T, dir string, change func(*e2ereport.Report)) {
	t.Helper()
	r := e2ereport.Report{HoldfastCommit: commit, HoldfastTreeState: "clean"}
	for _, suite := range e2ereport.Suites() {
		s := e2ereport.Suite{Suite: suite}
		for _, p := range e2ereport.Catalog[suite] {
			for _, row := range p.Rows {
				sc := e2ereport.Scenario{Suite: suite, Name: p.Name, Binary: row.Binary, Result: row.Expected, Expected: row.Expected}
				s.Scenarios = append(s.Scenarios, sc)
			}
		}
		r.Suites = append(r.Suites, s)
	}
	change(&r)
	data, err := r.JSON() // what e2e-report writes, not a marshalling of the reader's type

	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "e2e.json"), string(data))
}

// setRow gives the karmada-control-plane row of the scenario and binary
// the result and expected outcome, for writeE2E.
func setRow(name, binary string, result, expected e2ereport.Result) func(*e2ereport.Report) {
	return func(r *e2ereport.Report) {
		for i, sc := range r.Suites[0].Scenarios {
			if sc.Name == name && sc.Binary == binary {
				r.Suites[0].Scenarios[i].Result, r.Suites[0].Scenarios[i].Expected = result, expected
			}
		}
	}
}

func rewriteReport(t *testing.T, o *Options, change func(*treetest.Result)) {
	t.Helper()
	sh := o.Shipped[0]
	name := filepath.Join(o.Inputs.Reports, "test-"+sh.Upstream.Name+"-"+sh.Pin.Version+".json")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var r []*treetest.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	change(r[0])
	if data, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	writeFile(t, name, string(data))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stampedBinaries caches one small static Go binary per holdfast version,
// stamped as internal/pipeline/build stamps the real ones (version and short
// series hash through the linker's -X), for the release's binaries gate.
var stampedBinaries sync.Map

// standins is the folder of the stand-in binaries, shared by the tests
// and removed by TestMain.
var standins struct {
	sync.Mutex
	dir string
}

func standinRoot(t *testing.T) string {
	standins.Lock()
	defer standins.Unlock()
	if standins.dir == "" {
		dir, err := os.MkdirTemp("", "holdfast-release-test-")
		if err != nil {
			t.Fatal(err)
		}
		standins.dir = dir
	}
	return standins.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if standins.dir != "" {
		os.RemoveAll(standins.dir)
	}
	os.Exit(code)
}

func stampedBinary(t *testing.T, sh Shipped) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to build stand-in binaries")
	}
	key := sh.Pin.VersionString() + " " + sh.SeriesHash
	if p, ok := stampedBinaries.Load(key); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp(standinRoot(t), "bin-")
	if err != nil {
		t.Fatal(err)
	}
	// Built as holdfast builds: build.Toolchain, the upstream module at a
	// pseudo-version after the pin, the version and series stamped.
	writeFile(t, filepath.Join(dir, "go.mod"), "module "+sh.Upstream.Module+"\n\ngo 1.22\n")
	writeFile(t, filepath.Join(dir, "v", "v.go"), "package v\n\nvar Version, Series string\n")
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nimport \""+sh.Upstream.Module+"/v\"\n\nfunc main() { println(v.Version, v.Series) }\n")
	up := &pins.Upstream{Name: "standin", Module: sh.Upstream.Module, Build: []string{"."}, Binaries: map[string]string{".": "standin"},
		Version: &pins.VersionVars{Package: "v", Vars: []pins.VersionVar{{Name: "Version", Field: pins.FieldVersion}, {Name: "Series", Field: pins.FieldSeriesHash}}}}
	bins, err := build.Build(context.Background(), build.Options{
		Tree: dir, Upstream: up, Pin: sh.Pin, Out: filepath.Join(dir, "out"), // inside the tree, as --bin may be
		Stamp: build.Stamp{Version: sh.Pin.VersionString(), SeriesHash: sh.SeriesHash, Source: build.Source{Commit: commit}},
		Env:   append(os.Environ(), "GOFLAGS=", "GOWORK=off"),
	})
	if err != nil {
		t.Fatalf("building a stand-in binary: %v", err)
	}
	out := bins[0].Path
	stampedBinaries.Store(key, out)
	return out
}

func copyBinary(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestShippedSeriesHashIsTheBuilds: the series gate compares binaries with
// the series hash LoadShipped computes. It used to leave the hash empty, so
// the gate looked for "unknown" in the binaries and passed any of them.
func TestShippedSeriesHashIsTheBuilds(t *testing.T) {
	for _, sh := range shipped(t) {
		if !strings.HasPrefix(sh.SeriesHash, "h1:") || build.ShortSeriesHash(sh.SeriesHash) == "unknown" {
			t.Errorf("%s %s: SeriesHash = %q, want the h1: hash of the series", sh.Upstream.Name, sh.Pin.Version, sh.SeriesHash)
		}
	}
	f := newFixture(t)
	other := f.opts.Shipped[0]
	other.SeriesHash = "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	name := other.Upstream.Name + "-" + other.Pin.Version
	for _, pkg := range other.Upstream.Build {
		dst := filepath.Join(f.opts.Inputs.Bin, name, other.Upstream.BinaryName(pkg))
		os.Remove(dst)
		copyBinary(t, stampedBinary(t, other), dst)
	}
	if _, err := Assemble(context.Background(), f.opts); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "another patch series") {
		t.Errorf("binaries of another series: err = %v, want refused", err)
	}
}

// standinVulnerabilities writes what vulnreport.WriteReport writes, without
// govulncheck.
func standinVulnerabilities(_ context.Context, stage string, bins []vulnreport.Binary) (string, error) {
	if len(bins) == 0 {
		return "", errors.New("no binaries")
	}
	for _, b := range bins {
		if _, err := os.Stat(b.Path); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(stage, vulnreport.FolderName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return "### Known vulnerabilities\n\nstand-in\n", os.WriteFile(filepath.Join(dir, vulnreport.SummaryFile), []byte("stand-in"), 0o644)
}

func TestNotesListEveryOverride(t *testing.T) {
	s := []Shipped{{
		Upstream: &pins.Upstream{Name: "karmada", Module: "github.com/karmada-io/karmada"},
		Pin:      pins.Pin{Version: "v1.18.2", Revision: 6, Series: "patches/karmada/1.18"},
		Overrides: []overrides.Entry{{Module: "golang.org/x/net", Version: "v0.55.0", Fixes: []string{"GO-2026-5025", "CVE-2026-42506"},
			DropWhen: "v0.55.0", Why: "smallest fixed version | minors only"}},
	}}
	md := string(Notes{Version: "v1.0.0", Source: build.Source{Commit: commit, Date: time.Unix(0, 0)}, Shipped: s}.Markdown())
	want := "| `golang.org/x/net` | v0.55.0 | GO-2026-5025 CVE-2026-42506 | upstream requires >= v0.55.0 | smallest fixed version \\| minors only |"
	if !strings.Contains(md, "## Dependency overrides") || !strings.Contains(md, want) {
		t.Errorf("notes lack the override row %q:\n%s", want, md)
	}
	if md := string(Notes{Version: "v1.0.0", Shipped: []Shipped{{Upstream: s[0].Upstream, Pin: s[0].Pin}}}.Markdown()); strings.Contains(md, "Dependency overrides") {
		t.Errorf("notes without overrides have the section:\n%s", md)
	}
}

func TestWaivedIsPerUpstream(t *testing.T) {
	s := []Shipped{
		{Upstream: &pins.Upstream{Module: "github.com/karmada-io/karmada"}, Waivers: []overrides.Waiver{{ID: "GO-2026-6603", Why: "x"}}},
		{Upstream: &pins.Upstream{Module: "github.com/kubeslice/worker-operator"}},
	}
	if !Waived(s, "github.com/karmada-io/karmada", "GO-2026-6603") || Waived(s, "github.com/kubeslice/worker-operator", "GO-2026-6603") || Waived(s, "github.com/karmada-io/karmada", "GO-2026-6610") {
		t.Errorf("Waived does not follow the series' waivers per upstream")
	}
}
