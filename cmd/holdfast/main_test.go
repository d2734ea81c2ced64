package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
)

// fixture serves the synthetic upstream to the go command the CLI runs.
func fixture(t *testing.T) *pipelinetest.Fixture {
	t.Helper()
	fx := pipelinetest.New(t)
	for _, kv := range fx.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	checksumDB = fx.Config.Download.ChecksumDB
	t.Cleanup(func() { checksumDB = "" })
	return fx
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"apply"}, "--upstream is required"},
		{[]string{"apply", "--upstream", "up", "--all", "--version", "v1.2.0"}, "--all and --version exclude each other"},
		{[]string{"apply", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"apply", "--upstream", "up", "extra"}, `unexpected argument "extra"`},
		{[]string{"rebase", "--upstream", "up"}, "--version is required"},
		{[]string{"build"}, "--upstream is required"},
		{[]string{"test", "--upstream", "up", "--all", "--version", "v1.2.0"}, "--all and --version exclude each other"},
		{[]string{"pins"}, "want `pins verify` or `pins list`"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

func TestMissingPinFile(t *testing.T) {
	code, _, stderr := runCLI(t, "apply", "--root", t.TempDir(), "--upstream", "up")
	if code != 1 || !strings.Contains(stderr, "no pins.txt in") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

func TestApply(t *testing.T) {
	fx := fixture(t)
	root := fx.Config.Root
	code, stdout, stderr := runCLI(t, "apply", "--root", root, "--upstream", "up")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, tree := range []string{"up-v1.2.0", "up-v1.2.0-pristine"} {
		if _, err := os.Stat(filepath.Join(root, "_output", "trees", tree, "HOLDFAST-PROVENANCE")); err != nil {
			t.Errorf("%s: %v", tree, err)
		}
	}
	// stdout is the trees, one a line; the steps are on stderr.
	if want := filepath.Join(root, "_output", "trees", "up-v1.2.0") + "\n" + filepath.Join(root, "_output", "trees", "up-v1.2.0-pristine") + "\n"; stdout != want {
		t.Errorf("apply stdout:\n%s\nwant:\n%s", stdout, want)
	}
	code, _, stderr = runCLI(t, "apply", "--root", root, "--upstream", "up")
	if code != 0 || strings.Count(stderr, "up to date") != 2 {
		t.Errorf("second apply: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "apply", "--root", root, "--upstream", "up", "--version", "v9.0.0")
	if code != 1 || !strings.Contains(stderr, "upstream up has no pin for v9.0.0") {
		t.Errorf("unpinned version: exit %d, %s", code, stderr)
	}
}

func TestPinsVerifyAndFetch(t *testing.T) {
	fx := fixture(t)
	root := fx.Config.Root
	code, stdout, stderr := runCLI(t, "pins", "verify", "--root", root)
	if code != 0 || !strings.Contains(stdout, "ok   up v1.2.0 "+fx.Sums["v1.2.0"]+" (series patches/up/1.2: 1 patches)") {
		t.Errorf("pins verify: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "fetch", "--root", root, "--upstream", "up")
	if code != 0 || !strings.Contains(stdout, "example.com/up@v1.2.0") {
		t.Errorf("fetch: exit %d, %s", code, stdout)
	}

	// A pin whose hash is wrong fails verification.
	path := filepath.Join(root, pins.FileName)
	data, _ := os.ReadFile(path)
	bad := strings.Replace(string(data), fx.Sums["v1.2.0"], fx.Sums["v1.3.0"], 1)
	os.WriteFile(path, []byte(bad), 0o644)
	code, stdout, stderr = runCLI(t, "pins", "verify", "--root", root)
	if code != 1 || !strings.Contains(stdout, "FAIL up v1.2.0") || !strings.Contains(stderr, "the pin says "+fx.Sums["v1.3.0"]) {
		t.Errorf("bad pin: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestRebase(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantErr    string
		wantPinned string // a pin line pins.txt must then contain, "" for unchanged
	}{
		{name: "clean", args: []string{"--version", "v1.2.1"}, wantOut: "regression tests FAIL on pristine v1.2.1 as expected: the series is still needed"},
		{name: "offset", args: []string{"--version", "v1.3.0"}, wantOut: "result: NEEDS REFRESH"},
		{name: "conflict", args: []string{"--version", "v1.1.0"}, wantCode: 1, wantOut: "result: CONFLICT", wantErr: "the series conflicts"},
		{name: "offset refuses to update pins", args: []string{"--version", "v1.3.0", "--update-pins"}, wantCode: 1, wantErr: "pins not updated"},
		{
			name: "clean updates the pin of its minor", args: []string{"--version", "v1.2.1", "--update-pins"},
			wantOut: "pins: up v1.2.1 replaces v1.2.0", wantPinned: "pin v1.2.1 %s series=patches/up/1.2 revision=1 default",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := fixture(t)
			root := fx.Config.Root
			before, _ := os.ReadFile(filepath.Join(root, pins.FileName))
			out := filepath.Join(t.TempDir(), "reports")
			code, stdout, stderr := runCLI(t, append([]string{"rebase", "--root", root, "--upstream", "up", "--out", out}, tt.args...)...)
			if code != tt.wantCode || !strings.Contains(stdout, tt.wantOut) || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			// The reports are written whatever the verdict, a conflict too,
			// and the text one is what stdout showed.
			version := tt.args[1]
			text, err := os.ReadFile(filepath.Join(out, "rebase-up-"+version+".txt"))
			if err != nil || !strings.HasPrefix(stdout, string(text)) {
				t.Errorf("text report (%v):\n%s\nstdout:\n%s", err, text, stdout)
			}
			js, err := os.ReadFile(filepath.Join(out, "rebase-up-"+version+".json"))
			var report struct {
				Schema, Version string
				ResultMessage   string `json:"resultMessage"`
			}
			if err == nil {
				err = json.Unmarshal(js, &report)
			}
			if err != nil || report.Schema != "holdfast.rebase/v1" || report.Version != version || !strings.Contains(string(text), "result: "+report.ResultMessage+"\n") {
				t.Errorf("JSON report %+v (%v):\n%s", report, err, js)
			}
			if want := "reports: [" + filepath.Join(out, "rebase-up-"+version+".txt"); !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
			after, _ := os.ReadFile(filepath.Join(root, pins.FileName))
			if tt.wantPinned == "" {
				if !bytes.Equal(before, after) {
					t.Errorf("pins.txt changed:\n%s", after)
				}
				return
			}
			if want := strings.Replace(tt.wantPinned, "%s", fx.Sums["v1.2.1"], 1); !strings.Contains(string(after), want) {
				t.Errorf("pins.txt lacks %q:\n%s", want, after)
			}
		})
	}
}

// TestTest runs the RED/GREEN report on the synthetic upstream, whose
// regression test fails on pristine and passes patched.
func TestTest(t *testing.T) {
	fx := fixture(t)
	reports := t.TempDir()
	code, stdout, stderr := runCLI(t, "test", "--root", fx.Config.Root, "--upstream", "up", "--reports", reports)
	want := "up v1.2.0  regression  pristine RED (expected)  patched GREEN (expected)  upstream tests of touched pkgs: PASS"
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0 and %q", code, stdout, stderr, want)
	}
	for _, name := range []string{"test-up-v1.2.0.md", "test-up-v1.2.0.json"} {
		if _, err := os.Stat(filepath.Join(reports, name)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "holdfast ") {
		t.Errorf("exit %d, %q", code, stdout)
	}
	for _, flag := range []string{"--version", "-version"} {
		code, got, stderr := runCLI(t, flag)
		if code != 0 || got != stdout {
			t.Errorf("holdfast %s: exit %d, stdout %q, stderr %q; want exit 0 and %q (holdfast version)", flag, code, got, stderr, stdout)
		}
	}
}

// TestPinsConsultTheChecksumDatabase serves a version other than the one
// the checksum database recorded, pinned at the hash of what is served: a
// pin nobody checked. Whatever the environment says, `pins verify` and
// `rebase --update-pins` must not call it verified or write it down.
func TestPinsConsultTheChecksumDatabase(t *testing.T) {
	tampered := pipelinetest.ClientGo + "\nfunc exfiltrate() {}\n"
	for _, tt := range []struct {
		name string
		env  []string
		want string // in stderr
	}{
		{name: "database disagrees with the proxy", want: "SECURITY ERROR"},
		{name: "GOSUMDB off", env: []string{"GOSUMDB=off"}, want: "GOSUMDB=off"},
		{name: "GONOSUMDB names the module", env: []string{"GONOSUMDB=" + pipelinetest.Module}, want: "GONOSUMDB=" + pipelinetest.Module},
		{name: "GOPRIVATE covers the module", env: []string{"GOPRIVATE=example.com", "GONOPROXY=none.invalid"}, want: "GOPRIVATE=example.com"},
	} {
		t.Run("pins verify/"+tt.name, func(t *testing.T) {
			fx := fixture(t)
			root := fx.Config.Root
			served := fx.Proxy.Tamper(t, pipelinetest.Module, "v1.2.0", map[string]string{"pkg/util/client.go": tampered})
			path := filepath.Join(root, pins.FileName)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(strings.Replace(string(data), fx.Sums["v1.2.0"], served, 1)), 0o644)
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			code, stdout, stderr := runCLI(t, "pins", "verify", "--root", root)
			if code != 1 || strings.Contains(stdout, "ok ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("pins verify of a pin the checksum database does not hold (%s), env %q: exit %d\n%s%s\nwant exit 1 and %q",
					served, tt.env, code, stdout, stderr, tt.want)
			}
		})
		t.Run("rebase --update-pins/"+tt.name, func(t *testing.T) {
			fx := fixture(t)
			root := fx.Config.Root
			served := fx.Proxy.Tamper(t, pipelinetest.Module, "v1.2.1", map[string]string{"pkg/util/client.go": tampered})
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			before, _ := os.ReadFile(filepath.Join(root, pins.FileName))
			code, stdout, stderr := runCLI(t, "rebase", "--root", root, "--upstream", "up", "--version", "v1.2.1", "--update-pins")
			after, _ := os.ReadFile(filepath.Join(root, pins.FileName))
			if code != 1 || !bytes.Equal(before, after) || !strings.Contains(stderr, tt.want) {
				t.Errorf("rebase --update-pins onto a version the checksum database does not hold (%s), env %q: exit %d, pins.txt changed %v\n%s%s\nwant exit 1, pins.txt unchanged and %q",
					served, tt.env, code, !bytes.Equal(before, after), stdout, stderr, tt.want)
			}
		})
	}
}

// TestHelp: help that was asked for is on stdout with exit 0, and names
// the command's flags; an unknown command in help is a usage error.
func TestHelp(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    []string // in stdout
		notWant string   // not in stdout
	}{
		{args: []string{"help"}, want: []string{"usage:", "holdfast images  push", "holdfast help [COMMAND"}},
		{args: []string{"--help"}, want: []string{"usage:", "holdfast rebase"}},
		{args: []string{"help", "help"}, want: []string{"holdfast help [COMMAND"}},
		{args: []string{"help", "apply"}, want: []string{"holdfast apply   --upstream NAME", "[--out DIR] [--patched-only]", "-patched-only", "-root string"}, notWant: "holdfast build"},
		{args: []string{"apply", "--help"}, want: []string{"holdfast apply   --upstream NAME", "-patched-only"}, notWant: "holdfast build"},
		{args: []string{"apply", "-h"}, want: []string{"-patched-only"}},
		{args: []string{"help", "images"}, want: []string{"holdfast images  build", "holdfast images  push"}, notWant: "holdfast charts"},
		{args: []string{"images", "--help"}, want: []string{"holdfast images  build", "holdfast images  push"}},
		{args: []string{"help", "images", "push"}, want: []string{"holdfast images  push", "-plain-http"}, notWant: "holdfast images  build"},
		{args: []string{"help", "pins", "verify"}, want: []string{"holdfast pins verify", "-upstream string"}},
		{args: []string{"help", "version"}, want: []string{"holdfast version | --version"}},
		{args: []string{"help", "vulns"}, want: []string{"holdfast vulns   [--out DIR]", "-main-version string", "exit 0 whatever is found"}, notWant: "holdfast tools"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Errorf("exit %d, stderr %q; want exit 0 and nothing on stderr", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if tt.notWant != "" && strings.Contains(stdout, tt.notWant) {
				t.Errorf("stdout has %q, another command's usage:\n%s", tt.notWant, stdout)
			}
		})
	}

	code, stdout, stderr := runCLI(t, "help", "frobnicate")
	if want := `holdfast help: unknown command "frobnicate" (commands: pins, fetch, apply, build, test, rebase, watch, charts, images, release, vulns, tools, version)`; code != 2 || stdout != "" || strings.TrimSpace(stderr) != want {
		t.Errorf("help frobnicate: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, want)
	}
	// A usage error prints the command's usage, not the whole list, on stderr.
	code, stdout, stderr = runCLI(t, "apply", "--bogus")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "holdfast apply   --upstream NAME") || strings.Contains(stderr, "holdfast build") {
		t.Errorf("apply --bogus: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}
