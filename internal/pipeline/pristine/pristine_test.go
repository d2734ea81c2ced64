package pristine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
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
	return pristine.Downloader{Env: proxy.Env(), ChecksumDB: proxy.ChecksumDB()}, sum
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

// TestFetchConsultsTheChecksumDatabase serves a module whose zip is not the
// one the checksum database recorded, pinned at the hash of what is served:
// only the checksum database can tell. No setting of the go command's
// environment may turn that check off for a pin; each is refused by name.
func TestFetchConsultsTheChecksumDatabase(t *testing.T) {
	tests := []struct {
		name string
		env  []string // on top of the proxy's
		want []string
	}{
		{name: "database disagrees with the proxy", want: []string{modPath + "@v1.2.3", "checksum mismatch", "SECURITY ERROR"}},
		{name: "GOSUMDB off", env: []string{"GOSUMDB=off"}, want: []string{"GOSUMDB=off"}},
		{name: "GONOSUMDB names the module", env: []string{"GONOSUMDB=" + modPath}, want: []string{"GONOSUMDB=" + modPath}},
		// GONOPROXY keeps the proxy in use, so only GOPRIVATE's GONOSUMDB default counts.
		{name: "GOPRIVATE covers the module", env: []string{"GOPRIVATE=other.example/x,example.com", "GONOPROXY=none.invalid"}, want: []string{"GOPRIVATE=other.example/x,example.com"}},
		{name: "GOSUMDB another database", env: []string{"GOSUMDB=sum.example.com+01234567+AbCd https://sum.example.com"},
			want: []string{"GOSUMDB=sum.example.com+01234567+AbCd https://sum.example.com", "names another checksum database"}},
		{name: "GOINSECURE covers the module", env: []string{"GOINSECURE=*.com"}, want: []string{"GOINSECURE=*.com"}},
		{name: "GOFLAGS -insecure", env: []string{"GOFLAGS=-modcacherw -insecure"}, want: []string{"GOFLAGS=-modcacherw -insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath("go"); err != nil {
				t.Skip("no go command on PATH")
			}
			proxy := modproxytest.New(t)
			proxy.Add(t, modPath, "v1.2.3", map[string]string{"pkg/util/client.go": "package util\n\nconst Token = \"from-secret\"\n"})
			served := proxy.Tamper(t, modPath, "v1.2.3", map[string]string{"pkg/util/client.go": "package util\n\nconst Token = \"exfiltrated\"\n"})
			d := pristine.Downloader{Env: append(proxy.Env(), tt.env...), ChecksumDB: proxy.ChecksumDB()}
			_, err := d.Fetch(context.Background(), modPath, "v1.2.3", served)
			if err == nil {
				t.Fatalf("Fetch accepted %s@v1.2.3 at %s, a hash the checksum database does not hold (env %q)", modPath, served, tt.env)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// Settings that leave the pin's module to the checksum database are no
// reason to refuse: patterns for other modules, sum.golang.org spelled out,
// flags that do not weaken fetches.
func TestFetchAcceptsSettingsForOtherModules(t *testing.T) {
	for _, env := range [][]string{
		{"GONOSUMDB=corp.example.com,example.com/upstream-fork"},
		{"GOPRIVATE=corp.example.com/*"},
		{"GOINSECURE=corp.example.com"},
		{"GOSUMDB=sum.golang.org"},
		{"GOFLAGS=-modcacherw -mod=mod"},
	} {
		t.Run(strings.Join(env, " "), func(t *testing.T) {
			d, sum := setup(t)
			d.Env = append(d.Env, env...)
			if _, err := d.Fetch(context.Background(), modPath, "v1.2.3", sum); err != nil {
				t.Errorf("Fetch with %q: %v", env, err)
			}
		})
	}
}

// A module fetched earlier with the check off (by anyone sharing the module
// cache) is in the cache already; Fetch still asks the checksum database,
// which the go command does for every download outside a module.
func TestFetchChecksModulesCachedWithoutTheDatabase(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	proxy := modproxytest.New(t)
	proxy.Add(t, modPath, "v1.2.3", map[string]string{"pkg/util/client.go": "package util\n\nconst Token = \"from-secret\"\n"})
	served := proxy.Tamper(t, modPath, "v1.2.3", map[string]string{"pkg/util/client.go": "package util\n\nconst Token = \"exfiltrated\"\n"})
	cmd := exec.Command("go", "mod", "download", "-json", modPath+"@v1.2.3")
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), append(proxy.Env(), "GOSUMDB=off")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOSUMDB=off go mod download: %v\n%s", err, out)
	}
	d := pristine.Downloader{Env: proxy.Env(), ChecksumDB: proxy.ChecksumDB()}
	_, err := d.Fetch(context.Background(), modPath, "v1.2.3", served)
	if err == nil || !strings.Contains(err.Error(), "SECURITY ERROR") {
		t.Fatalf("Fetch of a module cached without the checksum database, pinned at %s: %v; want the database's refusal", served, err)
	}
}

// A setting made with `go env -w` (the go env file) counts as one in the
// environment: the go command would apply it all the same.
func TestFetchReadsTheGoEnvFile(t *testing.T) {
	d, sum := setup(t)
	file := filepath.Join(t.TempDir(), "go.env")
	if err := os.WriteFile(file, []byte("GONOSUMDB=example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Env = append(d.Env, "GOENV="+file)
	_, err := d.Fetch(context.Background(), modPath, "v1.2.3", sum)
	for _, w := range []string{"GONOSUMDB=example.com skips the checksum database", "go env -u GONOSUMDB"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Fetch with GONOSUMDB in the go env file: %v; want an error containing %q", err, w)
		}
	}
}
