package modproxytest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/zip"
)

// sumDBName names the local checksum database; the go command keys its
// cache of verified lookups by it.
const sumDBName = "sumdb.holdfast.test"

// Proxy is a file:// GOPROXY folder with a private module cache, and a
// checksum database on 127.0.0.1 that vouches for what Add publishes.
type Proxy struct {
	dir      string
	modCache string
	// gopath holds the go command's record of the checksum database's
	// latest tree ($GOPATH/pkg/sumdb), which it checks every later tree
	// against: each Proxy has its own database key, so its own record.
	gopath string
	// sumDB is the GOSUMDB value naming the local database: name+key URL.
	sumDB string

	mu   sync.Mutex
	sums map[string][]byte // path@version -> its go.sum lines
}

// New returns an empty proxy whose folders and checksum database t removes
// at the end.
func New(t testing.TB) *Proxy {
	t.Helper()
	p := &Proxy{dir: tempDir(t), modCache: tempDir(t), gopath: tempDir(t), sums: map[string][]byte{}}
	skey, vkey, err := note.GenerateKey(rand.Reader, sumDBName)
	if err != nil {
		t.Fatal(err)
	}
	db := sumdb.NewServer(sumdb.NewTestServer(skey, p.gosum))
	mux := http.NewServeMux()
	for _, path := range sumdb.ServerPaths {
		mux.Handle(path, db)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.sumDB = vkey + " " + srv.URL
	return p
}

// gosum answers the checksum database's lookups: the go.sum lines Add
// recorded, and nothing for a module it never published (the go command
// then refuses the module, as sum.golang.org's 404 makes it do).
func (p *Proxy) gosum(path, version string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines, ok := p.sums[path+"@"+version]
	if !ok {
		return nil, fmt.Errorf("%s@%s: not published", path, version)
	}
	return lines, nil
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
// a go.mod is added when files has none), records it in the checksum
// database, and returns its h1: hash.
func (p *Proxy) Add(t testing.TB, path, version string, files map[string]string) string {
	t.Helper()
	sum, modSum := p.publish(t, path, version, files)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sums[path+"@"+version] = fmt.Appendf(nil, "%s %s %s\n%s %s/go.mod %s\n", path, version, sum, path, version, modSum)
	return sum
}

// Tamper replaces the zip and go.mod the proxy serves for path@version,
// which Add published, with files, leaving the checksum database's record
// alone: a proxy (or a man in the middle) serving other content than the
// release. It returns the h1: hash of what is now served.
func (p *Proxy) Tamper(t testing.TB, path, version string, files map[string]string) string {
	t.Helper()
	if _, err := p.gosum(path, version); err != nil {
		t.Fatalf("Tamper: %v; Add it first", err)
	}
	sum, _ := p.publish(t, path, version, files)
	return sum
}

// publish writes path@version into the proxy folder and returns the h1:
// hashes of its zip and of its go.mod.
func (p *Proxy) publish(t testing.TB, path, version string, files map[string]string) (sum, modSum string) {
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
	if !strings.Contains("\n"+string(list), "\n"+version+"\n") {
		write("list", string(list)+version+"\n")
	}

	if sum, err = dirhash.HashZip(zipPath, dirhash.Hash1); err != nil {
		t.Fatal(err)
	}
	// The go.mod line of go.sum: Hash1 over the one file, as the go command
	// computes it.
	modSum, err = dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader([]byte(files["go.mod"]))), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sum, modSum
}

// ChecksumDB is the GOSUMDB value of the proxy's checksum database
// ("name+key URL"), for pristine.Downloader.ChecksumDB.
func (p *Proxy) ChecksumDB() string { return p.sumDB }

// Env is the environment that makes the go command use this proxy only (the
// checksum database is ChecksumDB's, which pristine.Downloader sets): a
// private module cache kept writable so the test can tamper with it and
// remove it, a private GOPATH for the checksum database's tree record, and
// the local toolchain so nothing else is fetched.
func (p *Proxy) Env() []string {
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(p.dir),
		"GOMODCACHE=" + p.modCache,
		"GOPATH=" + p.gopath,
		"GOFLAGS=-modcacherw",
		"GOTOOLCHAIN=local",
	}
}
