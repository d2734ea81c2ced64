package pristine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pristine"
)

const modPath = "example.com/upstream"

func setup(t *testing.T) (pristine.Downloader, string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	proxy := modproxytest.New(t)
	sum := proxy.Add(t, modPath, "v1.2.3", map[string]string{
		"pkg/util/client.go": "package util\n\nconst Token = \"from-secret\"\n",
	})
	return pristine.Downloader{Env: proxy.Env()}, sum
}

func TestFetchVerified(t *testing.T) {
	d, sum := setup(t)
	m, err := d.Fetch(context.Background(), modPath, "v1.2.3", sum)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if m.Sum != sum || m.String() != modPath+"@v1.2.3" {
		t.Errorf("module = %+v, want sum %s", m, sum)
	}
	if _, err := os.Stat(filepath.Join(m.Dir, "pkg", "util", "client.go")); err != nil {
		t.Errorf("extracted source missing: %v", err)
	}
}

func TestFetchRefuses(t *testing.T) {
	tests := []struct {
		name    string
		version string
		pin     func(sum string) string
		tamper  func(t *testing.T, dir string)
		want    []string
	}{
		{
			name:    "pin differs from what the go command reports",
			version: "v1.2.3",
			pin:     func(string) string { return "h1:gNjjEYUQr1aFgqcMiqQVZYWmnAAXhfXZoTbPJ5pala0=" },
			want:    []string{modPath + "@v1.2.3", "the pin says h1:gNjj"},
		},
		{
			name:    "edited file in the module cache",
			version: "v1.2.3",
			pin:     func(sum string) string { return sum },
			tamper: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "pkg", "util", "client.go"), []byte("package util\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"module cache was modified", "go clean -modcache"},
		},
		{
			name:    "file added to the module cache",
			version: "v1.2.3",
			pin:     func(sum string) string { return sum },
			tamper: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "pkg", "util", "extra.go"), []byte("package util\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"module cache was modified"},
		},
		{
			name:    "version the proxy does not serve",
			version: "v9.9.9",
			pin:     func(sum string) string { return sum },
			want:    []string{"go mod download " + modPath + "@v9.9.9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, sum := setup(t)
			ctx := context.Background()
			if tt.tamper != nil {
				m, err := d.Download(ctx, modPath, tt.version)
				if err != nil {
					t.Fatal(err)
				}
				tt.tamper(t, m.Dir)
			}
			_, err := d.Fetch(ctx, modPath, tt.version, tt.pin(sum))
			if err == nil {
				t.Fatal("Fetch accepted the module")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}
