package pipelinetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pristine"
)

// Module is the synthetic upstream's module path.
const Module = "example.com/up"

// ClientGo is pkg/util/client.go as released in v1.2.0: the token is frozen.
const ClientGo = `package util

// Token returns the credential used for requests.
func Token() string {
	return "frozen"
}
`

// Patch makes Token call the overlay's glue.
const Patch = `Subject: Read the token through the carried library
Why: The released Token is frozen.
Upstream-Issue: none
Upstream-PR: none
Applied-Upstream: v1.4.0
Drop-When: rebased onto v1.4.0
Holdfast-Fix: fresh-token
Holdfast-Regression-Test: TestTokenIsFresh
---
diff --git a/pkg/util/client.go b/pkg/util/client.go
--- a/pkg/util/client.go
+++ b/pkg/util/client.go
@@ -2,5 +2,5 @@
 
 // Token returns the credential used for requests.
 func Token() string {
-	return "frozen"
+	return refreshed()
 }
`

// Versions of the upstream the proxy serves, and what each does to
// pkg/util/client.go.
var Versions = map[string]string{
	// The pinned release, and a patch release with the same file.
	"v1.2.0": ClientGo,
	"v1.2.1": ClientGo,
	// Two lines added above: the patch applies with an offset of 2.
	"v1.3.0": strings.Replace(ClientGo, "package util\n", "package util\n\n// Package util has helpers.\n", 1),
	// Upstream fixed it the same way, with its own glue: already upstream.
	"v1.4.0": strings.Replace(ClientGo, `return "frozen"`, `return refreshed()`, 1) + "\nfunc refreshed() string { return \"fresh\" }\n",
	// The function was rewritten: the patch conflicts.
	"v1.1.0": strings.Replace(ClientGo, "// Token returns the credential used for requests.", "// Token returns the token.", 1),
}

// Fixture is a holdfast repository and its upstream.
type Fixture struct {
	Config   pipeline.Config
	Upstream *pins.Upstream
	Pin      pins.Pin
	// Sums are the h1: hashes of the served versions.
	Sums map[string]string
	// Proxy serves the versions, and its checksum database vouches for
	// them; Tamper makes it serve something else.
	Proxy *modproxytest.Proxy
}

// New lays out the repository in a temporary folder and serves the upstream.
func New(t *testing.T) *Fixture {
	t.Helper()
	proxy := modproxytest.New(t)
	sums := map[string]string{}
	for v, client := range Versions {
		sums[v] = proxy.Add(t, Module, v, map[string]string{"pkg/util/client.go": client})
	}
	root := t.TempDir()
	Write(t, root, map[string]string{
		"go.mod":                                "module github.com/holdfast-dist/holdfast\n\ngo 1.22\n",
		"pkg/lib/lib.go":                        "// Package lib gives fresh tokens.\npackage lib\n\n// Fresh returns a fresh token.\nfunc Fresh() string { return \"fresh\" }\n",
		"pkg/lib/lib_test.go":                   "package lib_test\n\nimport (\n\t\"testing\"\n\n\t\"github.com/holdfast-dist/holdfast/pkg/lib\"\n)\n\nfunc TestFresh(t *testing.T) {\n\tif lib.Fresh() != \"fresh\" {\n\t\tt.Fatal(\"stale\")\n\t}\n}\n",
		"overlay/up/pkg/util/glue.go":           "package util\n\nimport \"example.com/up/third_party/holdfast/lib\"\n\nfunc refreshed() string { return lib.Fresh() }\n",
		"tests/up/pkg/util/regression_test.go":  "package util\n\nimport \"testing\"\n\nfunc TestTokenIsFresh(t *testing.T) {\n\tif got := Token(); got != \"fresh\" {\n\t\tt.Fatalf(\"Token() = %q: the token is frozen\", got)\n\t}\n}\n",
		"patches/up/1.2/0001-fresh-token.patch": Patch,
		"patches/up/1.2/README.md":              "notes are not patches\n",
	})
	pinFile := "upstream up " + Module + "\n\tcarry lib\n\tbuild .\n\tpin v1.2.0 " + sums["v1.2.0"] + " series=patches/up/1.2 revision=3 default\n"
	Write(t, root, map[string]string{pins.FileName: pinFile})
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	up, _ := f.Upstream("up")
	pin, _ := up.Pin("")
	return &Fixture{
		Config: pipeline.Config{
			Root:     root,
			Out:      filepath.Join(root, pipeline.DefaultOut),
			Download: pristine.Downloader{Env: proxy.Env(), ChecksumDB: proxy.ChecksumDB()},
		},
		Upstream: up,
		Pin:      pin,
		Sums:     sums,
		Proxy:    proxy,
	}
}

// Env is the go command environment for building and testing trees
// offline with the fixture's proxy.
func (f *Fixture) Env() []string { return f.Config.Download.Env }

// Write writes files (slash-separated paths) below root.
func Write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// LockedBuffer is a log that a step's heartbeat goroutine writes while the
// test reads it: bytes.Buffer alone is a data race under -race.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
