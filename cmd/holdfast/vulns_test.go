package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scans themselves are internal/supplychain/vulnreport's tests (e2e-tagged,
// with the real govulncheck); here only what the CLI adds, all of it refused
// before a tool is built or anything is written.
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
		{[]string{"vulns", "--pristine", self}, 2, "--pristine compares pinned binaries with their pristine twins; it takes no BINARY arguments"},
		{[]string{"vulns", "--upstream", "karmada", self}, 2, "--upstream selects a pin's binaries; it and BINARY arguments exclude each other"},
		{[]string{"vulns", "--version", "v1.17.1"}, 2, "--version needs --upstream"},
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

// --upstream and --version scan that pin's binaries and, with --pristine,
// its twins, not the default pins': the pins that are not the default ship
// too, and their overrides are checked the same way.
func TestVulnsOnePin(t *testing.T) {
	fx := fixture(t)
	pinsPath := filepath.Join(fx.Config.Root, "pins.txt")
	data, err := os.ReadFile(pinsPath)
	if err != nil {
		t.Fatal(err)
	}
	older := "\tpin v1.1.0 " + fx.Sums["v1.2.0"] + " series=patches/up/1.2 revision=1\n"
	if err := os.WriteFile(pinsPath, append(data, older...), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, twins := t.TempDir(), t.TempDir()
	code, _, stderr := runCLI(t, "vulns", "--root", fx.Config.Root, "--out", t.TempDir(), "--bin", bin, "--upstream", "up", "--version", "v1.1.0")
	if want := filepath.Join(bin, "up-v1.1.0") + "/"; code != 1 || !strings.Contains(stderr, "binary "+want) || !strings.Contains(stderr, "of up v1.1.0") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming a binary in %s of up v1.1.0", code, stderr, want)
	}

	// The patched binary is there: the released twin of the same pin is
	// what is missing next.
	if err := os.MkdirAll(filepath.Join(bin, "up-v1.1.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "up-v1.1.0", fx.Upstream.BinaryName(".")), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "vulns", "--root", fx.Config.Root, "--out", t.TempDir(), "--bin", bin, "--upstream", "up", "--version", "v1.1.0", "--pristine", "--pristine-bin", twins)
	if want := filepath.Join(twins, "up-v1.1.0-released") + "/"; code != 1 || !strings.Contains(stderr, "binary "+want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming the twin in %s", code, stderr, want)
	}
}
