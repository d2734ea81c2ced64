package vulnreport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// self is this test binary: a Go binary with build information, for the
// checks that need one without building anything.
func self(t *testing.T) string {
	t.Helper()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckBinariesNamesTheBadFile(t *testing.T) {
	dir := t.TempDir()
	garbage := writeFile(t, filepath.Join(dir, "corrupt"), "\x7fELF not really", 0o755)
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self(t))
	if err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(other, filepath.Base(self(t)))
	writeFile(t, twin, string(data), 0o755)
	for _, tc := range []struct {
		name string
		bins []Binary
		want []string
	}{
		{"none", nil, []string{"no binaries to scan"}},
		{"missing", []Binary{{Path: filepath.Join(dir, "nope")}}, []string{filepath.Join(dir, "nope"), "no such file"}},
		{"corrupt", []Binary{{Path: self(t)}, {Path: garbage}}, []string{garbage, "not a Go binary"}},
		{"same name", []Binary{{Path: self(t)}, {Path: twin}}, []string{self(t), twin, "same name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBinaries(tc.bins)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to contain %q", err, want)
				}
			}
		})
	}
	if err := checkBinaries([]Binary{{Path: self(t)}}); err != nil {
		t.Errorf("a Go binary refused: %v", err)
	}
}

// buildHello builds a program with no dependency, with the given -ldflags.
func buildHello(t *testing.T, ldflags string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.test/hello\n\ngo 1.24\n", 0o644)
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() { println(\"hello\") }\n", 0o644)
	out := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, output)
	}
	return out
}

func TestHasSymbolTable(t *testing.T) {
	// go test links its binaries with -s, so the test binary is no example.
	if ok, err := hasSymbolTable(buildHello(t, "")); err != nil || !ok {
		t.Errorf("a plain build: %v, %v; want a symbol table", ok, err)
	}
	if ok, err := hasSymbolTable(buildHello(t, "-s -w")); err != nil || ok {
		t.Errorf("a build linked with -s -w: %v, %v; want none", ok, err)
	}
	garbage := writeFile(t, filepath.Join(t.TempDir(), "x"), "not an executable", 0o644)
	if ok, err := hasSymbolTable(garbage); err != nil || ok {
		t.Errorf("a text file: %v, %v; want no symbol table (unknown formats count as stripped)", ok, err)
	}
}

// A govulncheck that fails is a scan that did not happen: the error names
// the binary and quotes govulncheck; a stream that is not govulncheck's is
// refused the same way.
func TestScanReportsGovulncheckFailures(t *testing.T) {
	dir := t.TempDir()
	failing := writeFile(t, filepath.Join(dir, "failing"), "#!/bin/sh\necho 'govulncheck: unrecognized binary format' >&2\nexit 1\n", 0o755)
	babbling := writeFile(t, filepath.Join(dir, "babbling"), "#!/bin/sh\necho 'hello'\n", 0o755)
	db := Database{Dir: dir, Module: VulnDBModule, Version: VulnDBVersion}
	for tool, want := range map[string]string{
		failing:  "unrecognized binary format",
		babbling: "reading govulncheck's JSON stream",
	} {
		_, err := Scanner{Govulncheck: tool, DB: db}.Scan(context.Background(), []Binary{{Path: self(t)}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), self(t)) {
			t.Errorf("%s: err = %v, want it to name %s and contain %q", filepath.Base(tool), err, self(t), want)
		}
	}
}
