package vulnreport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// dbBuilds counts the database builds started (logf's "building" lines).
var dbBuilds atomic.Int32

func TestMain(m *testing.M) {
	logf = func(format string, _ ...any) {
		if strings.HasPrefix(format, "building") {
			dbBuilds.Add(1)
		}
	}
	os.Exit(m.Run())
}

// The indexer is built from the commit the snapshot is of.
func TestPinsAgree(t *testing.T) {
	if toolcache.VulnDBIndex.Version != VulnDBVersion {
		t.Errorf("toolcache indexes with x/vulndb %s, the snapshot is %s: bump both together", toolcache.VulnDBIndex.Version, VulnDBVersion)
	}
	if !strings.Contains(toolcache.VulnDBIndex.GoMod, "golang.org/x/vulndb "+VulnDBVersion) {
		t.Errorf("the indexer's wrapper module does not require x/vulndb %s:\n%s", VulnDBVersion, toolcache.VulnDBIndex.GoMod)
	}
	if got, err := time.Parse(time.RFC3339, "2026-11-05T23:49:57Z"); err != nil || !pinnedTime().Equal(got) {
		t.Errorf("snapshot time %s, want the pseudo-version's 2026-11-05T23:49:57Z", pinnedTime())
	}
}

func pinnedTime() time.Time {
	d, _ := snapshotTime(VulnDBVersion)
	return d
}

// fakeSnapshot publishes a vulndb-shaped module with two OSV files on a
// local proxy and returns its source and a downloader for it.
func fakeSnapshot(t *testing.T) (source, pristine.Downloader) {
	t.Helper()
	p := modproxytest.New(t)
	const path, version = "example.test/vulndb", "v0.0.0-20260102030405-abcdefabcdef"
	sum := p.Add(t, path, version, map[string]string{
		"data/osv/GO-2026-0001.json": `{"id":"GO-2026-0001"}`,
		"data/osv/GO-2026-0002.json": `{"id":"GO-2026-0002"}`,
	})
	return source{path, version, sum}, pristine.Downloader{Env: p.Env(), ChecksumDB: p.ChecksumDB()}
}

// fakeIndex stands in for cmd/indexdb: an index naming each OSV file, and
// a count of its runs.
func fakeIndex(runs *atomic.Int32) indexFunc {
	return func(_ context.Context, osvDir, out string) error {
		runs.Add(1)
		files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
		if err != nil {
			return err
		}
		var ids []string
		for _, f := range files {
			ids = append(ids, fmt.Sprintf(`{"id":%q}`, strings.TrimSuffix(filepath.Base(f), ".json")))
		}
		if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "index", "db.json"), []byte(`{"modified":"2026-01-02T03:04:05Z"}`), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, "index", "vulns.json"), []byte("["+strings.Join(ids, ",")+"]"), 0o644)
	}
}

func TestBuildDBOnceAndReuse(t *testing.T) {
	src, dl := fakeSnapshot(t)
	cache := t.TempDir()
	var runs atomic.Int32
	builds := dbBuilds.Load()
	db, err := buildDB(context.Background(), cache, src, dl, fakeIndex(&runs))
	if err != nil {
		t.Fatal(err)
	}
	if db.Dir != filepath.Join(cache, src.version) || db.Entries != 2 || db.Version != src.version || db.Sum != src.sum {
		t.Errorf("database %+v", db)
	}
	if want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC); !db.Committed.Equal(want) || !db.LastModified.Equal(want) {
		t.Errorf("committed %s, last modified %s, want %s (pseudo-version time, db.json)", db.Committed, db.LastModified, want)
	}
	if db.URL() != "file://"+db.Dir {
		t.Errorf("URL %s", db.URL())
	}
	again, err := buildDB(context.Background(), cache, src, dl, fakeIndex(&runs))
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || dbBuilds.Load()-builds != 1 || again != db {
		t.Errorf("second call: %d index runs and %d builds (want 1 each), database %+v, want %+v", runs.Load(), dbBuilds.Load()-builds, again, db)
	}
	if got := listDir(t, cache); !slices.Equal(got, []string{src.version}) {
		t.Errorf("cache holds %q, want only %s", got, src.version)
	}
	// A folder from another snapshot of the same version (its SOURCE names
	// another hash) is not taken for this one.
	if err := os.WriteFile(filepath.Join(db.Dir, sourceFile), []byte("example.test/vulndb "+src.version+" h1:other=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if current(db.Dir, src) {
		t.Error("a folder whose SOURCE names another hash counts as current")
	}
}

func TestBuildDBFailuresLeaveNothing(t *testing.T) {
	src, dl := fakeSnapshot(t)
	boom := func(context.Context, string, string) error { return errors.New("indexer exploded") }
	empty := func(_ context.Context, _, out string) error { return os.MkdirAll(filepath.Join(out, "index"), 0o755) }
	wrongSum := src
	wrongSum.sum = "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	var runs atomic.Int32
	for _, tc := range []struct {
		name  string
		src   source
		index indexFunc
		want  string
	}{
		{"indexer fails", src, boom, "indexer exploded"},
		{"index unreadable", src, empty, "db.json"},
		{"hash differs from the pin", wrongSum, fakeIndex(&runs), "the pin says h1:AAAA"},
		{"module missing", source{src.path, "v0.0.0-20990101000000-000000000000", src.sum}, fakeIndex(&runs), "go mod download"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := buildDB(context.Background(), cache, tc.src, dl, tc.index)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if got := listDir(t, cache); len(got) != 0 {
				t.Errorf("a failed build left %q", got)
			}
		})
	}
	if runs.Load() != 0 {
		t.Errorf("the indexer ran %d times on a snapshot that should have been refused", runs.Load())
	}
}
