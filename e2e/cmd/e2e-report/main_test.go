package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
)

func TestRunWritesMarkdownAndJSON(t *testing.T) {
	root := t.TempDir()
	r := e2ereport.NewRecorder(root, "worker-hub-failover")
	r.Add(e2ereport.Scenario{Name: "failover", Binary: "patched", Result: e2ereport.Fail, Expected: e2ereport.Pass})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}

	if err := run([]string{"-root", root}); err != nil {
		t.Fatalf("run without -strict: %v", err)
	}
	for _, name := range []string{"e2e.md", "e2e.json"} {
		data, err := os.ReadFile(filepath.Join(root, "_output", "reports", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "failover") {
			t.Errorf("%s does not mention the scenario:\n%s", name, data)
		}
	}
	if err := run([]string{"-root", root, "-strict"}); err == nil {
		t.Error("run -strict with an unmet scenario succeeded")
	}
}
