package treetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOverrideImporters finds the packages whose code or tests import a
// package of an overridden module, and only those.
func TestOverrideImporters(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":                "module example.com/up\n\ngo 1.22\n\nrequire (\n\texample.com/dep v1.0.0\n\texample.com/other v1.0.0\n)\n",
		"main.go":               "package main\n\nimport _ \"example.com/dep\"\n\nfunc main() {}\n",
		"pkg/a/a.go":            "package a\n\nimport _ \"example.com/dep/sub\"\n",
		"pkg/b/b.go":            "package b\n",
		"pkg/b/b_test.go":       "package b_test\n\nimport _ \"example.com/dep\"\n",
		"pkg/c/c.go":            "package c\n\nimport _ \"example.com/other\"\n",
		"pkg/d/d.go":            "package d\n\nimport _ \"example.com/depot\"\n",
		"pkg/e/internal/e.go":   "package internal\n\nimport _ \"fmt\"\n",
		"third_party/x/x.go":    "package x\n",
		"pkg/b/testdata/t.go":   "package ignored\n\nimport _ \"example.com/dep\"\n",
		"pkg/a/a_internal.go":   "package a\n",
		"pkg/c/c_test.go":       "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
		"pkg/e/internal/e_x.go": "package internal\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Runner{Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	got, err := r.OverrideImporters(context.Background(), dir, []string{"example.com/dep"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "./pkg/a", "./pkg/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("importers of example.com/dep = %q, want %q", got, want)
	}
	if got, err := r.OverrideImporters(context.Background(), dir, nil); err != nil || got != nil {
		t.Errorf("no overridden modules: %q, %v", got, err)
	}
	if got := overriddenModules([]string{"golang.org/x/net v0.49.0 => v0.58.0 (fixes GO-2026-4918)", "cel.dev/expr v0.25.1 => v0.25.2 (required by the overridden versions)"}); !reflect.DeepEqual(got, []string{"golang.org/x/net", "cel.dev/expr"}) {
		t.Errorf("overriddenModules = %q", got)
	}
}
