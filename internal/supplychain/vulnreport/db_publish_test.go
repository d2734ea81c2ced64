package vulnreport

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
)

func TestBuildDBRefusesASnapshotWithoutOSVFolder(t *testing.T) {
	p := modproxytest.New(t)
	const path, version = "example.test/vulndb", "v0.0.0-20260102030405-abcdefabcdef"
	sum := p.Add(t, path, version, map[string]string{"README.md": "no advisories here\n"})
	dl := pristine.Downloader{Env: p.Env(), ChecksumDB: p.ChecksumDB()}
	var runs atomic.Int32
	_, err := buildDB(context.Background(), t.TempDir(), source{path, version, sum}, dl, fakeIndex(&runs))
	if err == nil || !strings.Contains(err.Error(), "no data/osv folder") {
		t.Errorf("err = %v, want the missing data/osv folder named", err)
	}
}

// writeDB writes a complete database folder whose SOURCE names src.
func writeDB(t *testing.T, dir string, src source) {
	t.Helper()
	var runs atomic.Int32
	osv := t.TempDir()
	if err := os.WriteFile(filepath.Join(osv, "GO-2026-0009.json"), []byte(`{"id":"GO-2026-0009"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fakeIndex(&runs)(context.Background(), osv, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sourceFile), []byte(src.line()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two processes building the same snapshot: the one that loses the rename
// uses the winner's folder, which is the same snapshot.
func TestBuildDBLosingTheRaceUsesTheWinner(t *testing.T) {
	src, dl := fakeSnapshot(t)
	cache := t.TempDir()
	var runs atomic.Int32
	racing := func(ctx context.Context, osvDir, out string) error {
		writeDB(t, filepath.Join(cache, src.version), src)
		return fakeIndex(&runs)(ctx, osvDir, out)
	}
	db, err := buildDB(context.Background(), cache, src, dl, racing)
	if err != nil {
		t.Fatalf("buildDB: %v", err)
	}
	if db.Dir != filepath.Join(cache, src.version) || db.Entries != 1 {
		t.Errorf("database %+v, want the winner's folder (1 entry)", db)
	}
}

// A folder of another snapshot in the way is not served as this one.
func TestBuildDBRefusesAForeignFolderInTheWay(t *testing.T) {
	src, dl := fakeSnapshot(t)
	cache := t.TempDir()
	other := src
	other.sum = "h1:other="
	var runs atomic.Int32
	blocking := func(ctx context.Context, osvDir, out string) error {
		writeDB(t, filepath.Join(cache, src.version), other)
		return fakeIndex(&runs)(ctx, osvDir, out)
	}
	if db, err := buildDB(context.Background(), cache, src, dl, blocking); err == nil {
		t.Errorf("buildDB served %+v from a folder whose SOURCE names another hash", db)
	}
}
