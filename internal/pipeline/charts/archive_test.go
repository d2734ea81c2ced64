package charts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeHelmLikeArchive writes a tgz the way helm's chartutil.Save does:
// gzip comment "Helm", entries stamped with the given time.
func writeHelmLikeArchive(t *testing.T, path string, at time.Time, files [][2]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Header.Comment = "Helm"
	zw.Header.Extra = []byte("+helm")
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), ModTime: at}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeArchiveMakesPackagingTimeIrrelevant(t *testing.T) {
	files := [][2]string{{"c/Chart.yaml", "name: c\n"}, {"c/values.yaml", "a: 1\n"}, {"c/templates/x.yaml", "kind: X\n"}}
	epoch := time.Date(2026, 8, 25, 16, 42, 0, 0, time.UTC)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tgz"), filepath.Join(dir, "b.tgz")
	writeHelmLikeArchive(t, a, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), files)
	writeHelmLikeArchive(t, b, time.Date(2027, 6, 6, 6, 6, 6, 0, time.UTC), files)
	for _, p := range []string{a, b} {
		if err := normalizeArchive(p, epoch); err != nil {
			t.Fatal(err)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("archives packaged at different times differ after normalizing")
	}

	zr, err := gzip.NewReader(bytes.NewReader(da))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Header.Comment != "Helm" || string(zr.Header.Extra) != "+helm" {
		t.Errorf("gzip header comment %q extra %q: helm's are not kept", zr.Header.Comment, zr.Header.Extra)
	}
	tr := tar.NewReader(zr)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			if i != len(files) {
				t.Errorf("%d entries, want %d", i, len(files))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if i >= len(files) || h.Name != files[i][0] || string(body) != files[i][1] {
			t.Errorf("entry %d: %s %q changed", i, h.Name, body)
		}
		if !h.ModTime.Equal(epoch) {
			t.Errorf("%s: ModTime %s, want %s", h.Name, h.ModTime, epoch)
		}
	}
}

func TestNormalizeArchiveRejectsANonArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.tgz")
	if err := os.WriteFile(path, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := normalizeArchive(path, time.Unix(0, 0)); err == nil {
		t.Fatal("a file that is no gzip was accepted")
	}
}
