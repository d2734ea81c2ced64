package e2ereport

import (
	"os"
	"path/filepath"
	"testing"
)

// A suite report without a name is named after its file; a named one keeps
// its name whatever the file is called. Suites sort by name, and two of the
// same name keep their files' order.
func TestMergeNamesSuites(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"worker.json": `{"scenarios":[]}`,
		"a.json":      `{"suite":"karmada","scenarios":[{"name":"first"}]}`,
		"b.json":      `{"suite":"karmada","scenarios":[{"name":"second"}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Merge(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Suites {
		first := ""
		if len(s.Scenarios) > 0 {
			first = s.Scenarios[0].Name
		}
		got = append(got, s.Suite+"/"+first)
	}
	want := []string{"karmada/first", "karmada/second", "worker/"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("merged suites %q, want %q", got, want)
	}
}
