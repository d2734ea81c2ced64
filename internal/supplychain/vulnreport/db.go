package vulnreport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// VulnDBModule is the module holding the Go vulnerability database's
// source: one OSV JSON file per advisory under data/osv.
const VulnDBModule = "golang.org/x/vulndb"

// VulnDBVersion is the database snapshot every report is made against. The
// repository has no tags, so it is a pseudo-version, whose timestamp is the
// snapshot commit's time. To bump it:
//
//  1. outside any module, `go list -m -json golang.org/x/vulndb@master`
//     names the newest commit's pseudo-version (through the module proxy);
//  2. `go mod download -json golang.org/x/vulndb@VERSION` prints its Sum,
//     checked against the checksum database: put both below, and the
//     version in internal/toolcache's vulndbIndexVersion (the indexer comes
//     from the same commit; TestPinsAgree holds them together);
//  3. `make vulns`: the new snapshot is indexed into its own folder
//     (.cache/vulndb/VERSION); the old folder can be deleted.
const VulnDBVersion = "v0.0.0-20261105234957-e22db6528018"

// VulnDBSum is VulnDBVersion's h1: hash. The download is checked against
// the checksum database, and the extracted module against this hash, as
// every pin is (pristine.Verify): a changed snapshot is refused, not used.
const VulnDBSum = "h1:mfngRv0Yoh0VApsXKEN82CjD99kl7mtparN3bs3JnqI="

// DBCacheDir is where indexed databases live under the repository root,
// one folder per snapshot version. Like .cache/tools it is ignored by git.
const DBCacheDir = ".cache/vulndb"

// sourceFile, written into a database folder last before it is renamed
// into place, names the snapshot it was indexed from.
const sourceFile = "SOURCE"

// Database is a v1 vulnerability database on disk, indexed from one
// snapshot of VulnDBModule.
type Database struct {
	// Dir is the database's folder; govulncheck reads it as URL().
	Dir string `json:"-"`
	// Module and Version name the snapshot.
	Module  string `json:"module"`
	Version string `json:"version"`
	// Sum is the snapshot's h1: hash.
	Sum string `json:"sum"`
	// Committed is the snapshot commit's time, read from the
	// pseudo-version: the date the database is current to.
	Committed time.Time `json:"committed"`
	// LastModified is index/db.json's "modified". The OSV files of
	// x/vulndb's data/osv carry no dates (vuln.go.dev sets them from the
	// git history when it deploys), so for a snapshot indexed from them it
	// is the zero time, 0001-01-01; Committed is the date that means
	// something.
	LastModified time.Time `json:"last_modified"`
	// Entries is the number of advisories (index/vulns.json).
	Entries int `json:"entries"`
}

// URL is the -db value govulncheck reads the database from.
func (d Database) URL() string {
	return "file://" + filepath.ToSlash(d.Dir)
}

// String is module@version.
func (d Database) String() string { return d.Module + "@" + d.Version }

// source is a snapshot of the database: a module version and its h1: hash.
type source struct{ path, version, sum string }

var pinned = source{VulnDBModule, VulnDBVersion, VulnDBSum}

// indexFunc writes a v1 database into out from the OSV files in osvDir.
type indexFunc func(ctx context.Context, osvDir, out string) error

// logf reports a database build starting; a variable so tests can count
// builds.
var logf = log.Printf

// DB returns the database of the pinned snapshot under
// root/.cache/vulndb/VulnDBVersion, building it first if it is not there:
// the snapshot is downloaded with `go mod download -json` (checksum
// database consulted, no setting may turn that off:
// internal/pipeline/pristine), checked against VulnDBSum, and indexed by
// x/vulndb's cmd/indexdb (built by internal/toolcache). The folder is built
// beside its destination and renamed into place, so it is either complete or
// absent.
func DB(ctx context.Context, root string) (Database, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return Database{}, err
	}
	dl := pristine.Downloader{}
	index := func(ctx context.Context, osvDir, out string) error {
		tool, err := toolcache.Ensure(ctx, root, toolcache.VulnDBIndex)
		if err != nil {
			return err
		}
		return runIndexer(ctx, tool, osvDir, out)
	}
	return buildDB(ctx, filepath.Join(root, DBCacheDir), pinned, dl, index)
}

// runIndexer runs x/vulndb's cmd/indexdb.
func runIndexer(ctx context.Context, tool, osvDir, out string) error {
	cmd := exec.CommandContext(ctx, tool, "-vulns", osvDir, "-out", out)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s -vulns %s -out %s: %v: %s", tool, osvDir, out, err, strings.TrimSpace(output.String()))
	}
	return nil
}

func buildDB(ctx context.Context, cache string, src source, dl pristine.Downloader, index indexFunc) (Database, error) {
	dir := filepath.Join(cache, src.version)
	if current(dir, src) {
		return loadDB(dir, src)
	}
	what := src.path + "@" + src.version
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s: %w", what, err)
	}
	logf("building the vulnerability database from %s (first run only)", what)
	m, err := dl.Download(ctx, src.path, src.version)
	if err != nil {
		return Database{}, fmt.Errorf("vulnerability database: %w", err)
	}
	if err := pristine.Verify(m, src.sum); err != nil {
		return Database{}, fmt.Errorf("vulnerability database: %w", err)
	}
	osvDir := filepath.Join(m.Dir, "data", "osv")
	if fi, err := os.Stat(osvDir); err != nil || !fi.IsDir() {
		return Database{}, fmt.Errorf("vulnerability database %s: no data/osv folder in %s", what, m.Dir)
	}

	tmp, err := os.MkdirTemp(cache, src.version+".build-")
	if err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s: %w", what, err)
	}
	defer os.RemoveAll(tmp)
	if err := index(ctx, osvDir, tmp); err != nil {
		return Database{}, fmt.Errorf("indexing vulnerability database %s: %w", what, err)
	}
	// The index must read back before the folder is published.
	if _, err := readIndex(tmp); err != nil {
		return Database{}, fmt.Errorf("indexing vulnerability database %s: %w", what, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, sourceFile), []byte(src.line()), 0o644); err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s: %w", what, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s: %w", what, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process (a parallel test package) may have published the
		// same snapshot first; its folder is as good as this one.
		if !current(dir, src) {
			return Database{}, fmt.Errorf("vulnerability database %s: %w", what, err)
		}
	}
	return loadDB(dir, src)
}

func (s source) line() string { return s.path + " " + s.version + " " + s.sum + "\n" }

// current reports whether dir holds a complete database of src: its SOURCE
// file, written last, names src.
func current(dir string, src source) bool {
	got, err := os.ReadFile(filepath.Join(dir, sourceFile))
	return err == nil && string(got) == src.line()
}

// index is what a report needs of index/db.json and index/vulns.json.
type index struct {
	modified time.Time
	entries  int
}

func readIndex(dir string) (index, error) {
	var db struct {
		Modified *time.Time `json:"modified"`
	}
	if err := readJSON(filepath.Join(dir, "index", "db.json"), &db); err != nil {
		return index{}, err
	}
	if db.Modified == nil {
		return index{}, fmt.Errorf("%s: no \"modified\" field", filepath.Join(dir, "index", "db.json"))
	}
	var vulns []json.RawMessage
	if err := readJSON(filepath.Join(dir, "index", "vulns.json"), &vulns); err != nil {
		return index{}, err
	}
	if len(vulns) == 0 {
		return index{}, fmt.Errorf("%s: no advisories", filepath.Join(dir, "index", "vulns.json"))
	}
	return index{modified: db.Modified.UTC(), entries: len(vulns)}, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func loadDB(dir string, src source) (Database, error) {
	idx, err := readIndex(dir)
	if err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s@%s in %s: %w (remove the folder to rebuild it)", src.path, src.version, dir, err)
	}
	committed, err := snapshotTime(src.version)
	if err != nil {
		return Database{}, fmt.Errorf("vulnerability database %s@%s: %w", src.path, src.version, err)
	}
	return Database{
		Dir:          dir,
		Module:       src.path,
		Version:      src.version,
		Sum:          src.sum,
		Committed:    committed,
		LastModified: idx.modified,
		Entries:      idx.entries,
	}, nil
}

// snapshotTime is the commit time a pseudo-version carries. A tagged snapshot
// would carry none (zero time); x/vulndb has never been tagged.
func snapshotTime(version string) (time.Time, error) {
	if !module.IsPseudoVersion(version) {
		return time.Time{}, nil
	}
	t, err := module.PseudoVersionTime(version)
	return t.UTC(), err
}
