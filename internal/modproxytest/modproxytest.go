package modproxytest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// Proxy is a file:// GOPROXY folder with a private module cache.
type Proxy struct {
	dir      string
	modCache string
}

// New returns an empty proxy whose folders t removes at the end.
func New(t testing.TB) *Proxy {
	t.Helper()
	return &Proxy{dir: tempDir(t), modCache: tempDir(t)}
}

// tempDir is t.TempDir without the test's name in the path: GOPROXY is a
// comma-separated list, and a subtest name may hold a comma.
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "modproxytest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Add publishes path@version with files (slash-separated name to content;
// a go.mod is added when files has none) and returns its h1: hash.
func (p *Proxy) Add(t testing.TB, path, version string, files map[string]string) string {
	t.Helper()
	src := t.TempDir()
	if _, ok := files["go.mod"]; !ok {
		files["go.mod"] = fmt.Sprintf("module %s\n\ngo 1.22\n", path)
	}
	for name, content := range files {
		full := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		t.Fatal(err)
	}
	vdir := filepath.Join(p.dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(vdir, version+".zip")
	zf, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := zip.CreateFromDir(zf, module.Version{Path: path, Version: version}, src); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(vdir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(version+".mod", files["go.mod"])
	write(version+".info", fmt.Sprintf(`{"Version":%q}`, version))
	list, _ := os.ReadFile(filepath.Join(vdir, "list"))
	write("list", string(list)+version+"\n")

	sum, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Env is the environment that makes the go command use this proxy only:
// no checksum database (the modules are made up), a private module cache
// kept writable so the test can tamper with it and remove it, and the local
// toolchain so nothing else is fetched.
func (p *Proxy) Env() []string {
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(p.dir),
		"GOSUMDB=off",
		"GOMODCACHE=" + p.modCache,
		"GOFLAGS=-modcacherw",
		"GOTOOLCHAIN=local",
	}
}
