package build_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/build"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

func TestParsePlatforms(t *testing.T) {
	tests := []struct {
		in      string
		want    []build.Platform
		wantErr string
	}{
		{in: "linux/amd64,linux/arm64", want: build.DefaultPlatforms},
		{in: " linux/arm64 ", want: []build.Platform{{OS: "linux", Arch: "arm64"}}},
		{in: "linux", wantErr: `platform "linux": want os/arch`},
		{in: "linux/arm/v7", wantErr: `platform "linux/arm/v7"`},
		{in: "/amd64", wantErr: "want os/arch"},
		{in: "linux/amd64,", wantErr: `platform ""`},
		{in: "linux/amd64,linux/amd64", wantErr: "linux/amd64 is listed twice"},
	}
	for _, tt := range tests {
		got, err := build.ParsePlatforms(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePlatforms(%q): err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("ParsePlatforms(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParsePlatforms(%q)[%d] = %v, want %v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

// TestBuildPlatform cross-compiles the synthetic upstream for a platform
// other than the host's, twice, into two folders: the binaries are
// byte-identical, for the right machine, free of build paths, and beside
// (not inside) the host build's folder, which a host build replaces whole.
func TestBuildPlatform(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	target := build.Platform{OS: "linux", Arch: "arm64"}
	machine := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		target, machine = build.Platform{OS: "linux", Arch: "amd64"}, elf.EM_X86_64
	}
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{
		"overlay/up/cmd/hello/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/up/pkg/util\"\n)\n\nfunc main() { fmt.Println(util.Token()) }\n",
	})
	up := *fx.Upstream
	up.Build = []string{"./cmd/hello"}
	up.Binaries = map[string]string{"./cmd/hello": "up-hello"}
	tree, err := fx.Config.Build(context.Background(), &up, fx.Pin, provenance.Patched)
	if err != nil {
		t.Fatal(err)
	}
	build1 := func(out string, p build.Platform) string {
		t.Helper()
		bins, err := build.Build(context.Background(), build.Options{
			Tree: tree.Dir, Upstream: &up, Pin: fx.Pin, Out: out, Platform: p, Env: append(os.Environ(), fx.Env()...),
			Stamp: build.Stamp{Version: tree.Record.HoldfastVersion, SeriesHash: tree.Record.SeriesHash, Source: build.Source{Commit: "abc"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return bins[0].Path
	}
	outA, outB := t.TempDir(), t.TempDir()
	host := build1(outA, build.Platform{})
	a := build1(outA, target)
	b := build1(outB, target)

	if want := filepath.Join(build.PlatformDir(outA, &up, fx.Pin.Version, target), "up-hello"); a != want {
		t.Errorf("cross binary at %s, want %s", a, want)
	}
	if _, err := os.Stat(host); err != nil {
		t.Errorf("the cross build removed the host binary: %v", err)
	}
	build1(outA, build.Platform{})
	if _, err := os.Stat(a); err != nil {
		t.Errorf("a host build removed the cross binary: %v", err)
	}

	dataA, dataB := read(t, a), read(t, b)
	if sha256.Sum256(dataA) != sha256.Sum256(dataB) {
		t.Errorf("two builds of the same inputs differ: %s and %s", a, b)
	}
	f, err := elf.NewFile(bytes.NewReader(dataA))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != machine {
		t.Errorf("binary for %s is for machine %v, want %v", target, f.Machine, machine)
	}
	for _, path := range []string{tree.Dir, fx.Config.Root, outA} {
		if bytes.Contains(dataA, []byte(path)) {
			t.Errorf("binary holds the build path %s (-trimpath missing?)", path)
		}
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
