package image

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWithParents(t *testing.T) {
	tests := []struct {
		name    string
		files   []file
		want    []string // names, in order; folders end with /
		wantErr string
	}{
		{
			name:  "sorted, parents added once",
			files: []file{{Name: "usr/share/zoneinfo/UTC"}, {Name: "etc/passwd"}, {Name: "etc/group"}, {Name: "tmp", Dir: true}, {Name: "usr/share/zoneinfo/Europe/Paris"}},
			want:  []string{"etc/", "etc/group", "etc/passwd", "tmp/", "usr/", "usr/share/", "usr/share/zoneinfo/", "usr/share/zoneinfo/Europe/", "usr/share/zoneinfo/Europe/Paris", "usr/share/zoneinfo/UTC"},
		},
		{
			name:  "a listed folder keeps its mode and is not added again",
			files: []file{{Name: "home/nonroot", Dir: true, Mode: 0o700}, {Name: "home/nonroot/.keep"}},
			want:  []string{"home/", "home/nonroot/", "home/nonroot/.keep"},
		},
		{name: "absolute", files: []file{{Name: "/etc/passwd"}}, wantErr: `"/etc/passwd": want a clean path`},
		{name: "unclean", files: []file{{Name: "etc//passwd"}}, wantErr: "want a clean path"},
		{name: "escapes", files: []file{{Name: "../etc/passwd"}}, wantErr: "want a clean path"},
		{name: "empty", files: []file{{Name: ""}}, wantErr: "want a clean path"},
		{name: "twice", files: []file{{Name: "etc/passwd"}, {Name: "etc/passwd"}}, wantErr: `"etc/passwd" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withParents(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range got {
				n := f.Name
				if f.Dir {
					n += "/"
				}
				names = append(names, n)
			}
			if strings.Join(names, " ") != strings.Join(tt.want, " ") {
				t.Errorf("entries\n got %v\nwant %v", names, tt.want)
			}
			for _, f := range got {
				if f.Name == "home/nonroot" && f.Mode != 0o700 {
					t.Errorf("listed folder's mode became %o", f.Mode)
				}
			}
		})
	}
}

// TestNewLayer checks the tar itself: fixed time, numeric owners, no user
// names, no PAX record (extended attributes such as a file capability
// would make the image behave unlike upstream's), content streamed from a
// file; and that the same files give the same digest.
func TestNewLayer(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("\x7fELF binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 12, 2, 10, 48, 45, 0, time.UTC)
	files := []file{
		{Name: "bin/tool", Mode: 0o755, Source: src},
		{Name: "home/nonroot", Dir: true, Mode: 0o700, UID: 65532, GID: 65532},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
	}
	l, err := newLayer(files, mtime)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	seen := map[string]*tar.Header{}
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, hdr.Name)
		seen[hdr.Name] = hdr
		if !hdr.ModTime.Equal(mtime) {
			t.Errorf("%s: mtime %v, want %v", hdr.Name, hdr.ModTime, mtime)
		}
		if hdr.Uname != "" || hdr.Gname != "" {
			t.Errorf("%s: owner names %q/%q recorded", hdr.Name, hdr.Uname, hdr.Gname)
		}
		if !hdr.AccessTime.IsZero() || !hdr.ChangeTime.IsZero() {
			t.Errorf("%s: access or change time recorded", hdr.Name)
		}
		if len(hdr.PAXRecords) != 0 {
			t.Errorf("%s: PAX records %q", hdr.Name, hdr.PAXRecords)
		}
		if hdr.Name == "bin/tool" {
			data, _ := io.ReadAll(tr)
			if string(data) != "\x7fELF binary" {
				t.Errorf("bin/tool holds %q", data)
			}
		}
	}
	if want := "bin/ bin/tool etc/ etc/passwd home/ home/nonroot/"; strings.Join(order, " ") != want {
		t.Errorf("order %v, want %s", order, want)
	}
	if h := seen["bin/tool"]; h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("bin/tool: mode %o uid %d", h.Mode, h.Uid)
	}
	if h := seen["home/nonroot/"]; h.Mode != 0o700 || h.Uid != 65532 || h.Gid != 65532 || h.Typeflag != tar.TypeDir {
		t.Errorf("home/nonroot: %+v", h)
	}
	if h := seen["etc/"]; h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("added parent etc/: mode %o uid %d", h.Mode, h.Uid)
	}

	again, err := newLayer([]file{files[2], files[0], files[1]}, mtime)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := l.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("the same files in another order: digest %s, then %s", d1, d2)
	}
	later, _ := newLayer(files, mtime.Add(time.Second))
	if d3, _ := later.Digest(); d3 == d1 {
		t.Error("another time gives the same digest")
	}
}
