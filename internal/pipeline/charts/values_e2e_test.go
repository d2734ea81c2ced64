//go:build e2e

package charts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWorkerValuesWithEveryExampleRender: the worker chart's values.yaml with
// every example uncommented renders, with hub failover following on.
func TestWorkerValuesWithEveryExampleRender(t *testing.T) {
	f := setup(t)
	lines := workerValuesLines(t)
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(uncomment(lines, valuesExamples(lines)...)), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := f.render(t, f.operator, workerNamespace, "--values", path)
	env := map[string]string{}
	for _, e := range container(t, objs.deployment(t, "kubeslice-operator"), "manager").Env {
		env[e.Name] = e.Value
	}
	if env["HUB_SECONDARY_HOST_ENDPOINT"] != "https://hub-b.example.com:6443" {
		t.Errorf("HUB_SECONDARY_HOST_ENDPOINT %q, want the example's https://hub-b.example.com:6443", env["HUB_SECONDARY_HOST_ENDPOINT"])
	}
}
