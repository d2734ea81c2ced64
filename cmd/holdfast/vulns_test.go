package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scans themselves are internal/vulnreport's tests (e2e-tagged, with the
// real govulncheck); here only what the CLI adds, all of it refused before a
// tool is built or anything is written.
func TestVulnsRefusals(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "karmada-controller-manager")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"vulns", "--main-version", "karmada", self}, 2, `--main-version "karmada": want MODULE@VERSION`},
		{[]string{"vulns", "--main-version", "example.com/m@latest", self}, 2, "want MODULE@VERSION"},
		{[]string{"vulns", "--main-version", "example.com/not-this-one@v1.0.0", self}, 2, "names example.com/not-this-one, the main module of none of the binaries"},
		{[]string{"vulns", "--bin", "_output/bin", self}, 2, "exclude each other"},
		{[]string{"vulns", "--main-version", "example.com/m@v1.0.0"}, 2, "--main-version is for BINARY arguments"},
		{[]string{"vulns", missing}, 1, "binary " + missing + ": no such file"},
		{[]string{"vulns", "--pristine", self}, 2, "--pristine compares the default pins' binaries with their pristine twins; it takes no BINARY arguments"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, append([]string{tt.args[0], "--out", out}, tt.args[1:]...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and %q", code, stdout, stderr, tt.code, tt.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a refused scan wrote %v", entries)
			}
		})
	}
}

// Without BINARY arguments the default pins' binaries are scanned; one that
// was not built is named, with the verb that builds it.
func TestVulnsDefaultPinsNeedTheirBinaries(t *testing.T) {
	fx := fixture(t)
	code, _, stderr := runCLI(t, "vulns", "--root", fx.Config.Root, "--bin", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "of up v1.2.0") || !strings.Contains(stderr, "make binaries") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
