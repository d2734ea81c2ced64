package charts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// exampleKey is the first line of an example in a values file: a commented
// lowerCamel key ("  # clusterName: worker-1", "  # primary:"). Prose starts
// with a capital or an UPPER_CASE variable name and never matches.
var exampleKey = regexp.MustCompile(`^(\s*)# [a-z][A-Za-z]*:( |$)`)

// valuesExamples returns the examples of a values file, each as the line
// numbers it spans: a commented key and the commented lines indented below
// it ("#   endpoint: ...", "#   # prose").
func valuesExamples(lines []string) [][]int {
	var examples [][]int
	for i := 0; i < len(lines); i++ {
		m := exampleKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		example := []int{i}
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], m[1]+"#   ") {
			i++
			example = append(example, i)
		}
		examples = append(examples, example)
	}
	return examples
}

// uncomment removes the "# " each line of the examples starts with, as a
// user editing the file would.
func uncomment(lines []string, examples ...[]int) string {
	out := append([]string(nil), lines...)
	for _, example := range examples {
		for _, i := range example {
			indent := len(out[i]) - len(strings.TrimLeft(out[i], " "))
			out[i] = out[i][:indent] + strings.TrimPrefix(out[i][indent:], "# ")
		}
	}
	return strings.Join(out, "\n")
}

func workerValuesLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "charts", "worker-operator", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// TestWorkerValuesExamplesUncomment: the worker chart's values.yaml stays valid
// YAML (no duplicate key either) when a user uncomments any one example, and
// all of them together give every required value. `primary: {}` followed by a
// commented `endpoint:` did not: uncommented, it is a mapping after a flow
// mapping. (values_e2e_test.go renders the file with every example on.)
func TestWorkerValuesExamplesUncomment(t *testing.T) {
	lines := workerValuesLines(t)
	examples := valuesExamples(lines)
	if len(examples) < 4 {
		t.Fatalf("found %d examples in values.yaml, want clusterName, projectNamespace, primary and secondary", len(examples))
	}
	for _, example := range examples {
		var v map[string]any
		if err := yaml.UnmarshalStrict([]byte(uncomment(lines, example)), &v); err != nil {
			t.Errorf("values.yaml with line %d (%s) uncommented: %v", example[0]+1, strings.TrimSpace(lines[example[0]]), err)
		}
	}
	var all struct {
		ClusterName string
		Hub         struct {
			ProjectNamespace   string
			Primary, Secondary struct{ Endpoint, SecretName string }
		}
	}
	if err := yaml.Unmarshal([]byte(uncomment(lines, examples...)), &all); err != nil {
		t.Fatalf("values.yaml with every example uncommented: %v", err)
	}
	h := all.Hub
	if all.ClusterName == "" || h.ProjectNamespace == "" || h.Primary.Endpoint == "" || h.Primary.SecretName == "" || h.Secondary.Endpoint == "" || h.Secondary.SecretName == "" {
		t.Errorf("values.yaml with every example uncommented lacks a required or failover value: %+v", all)
	}
}

// TestValuesExamples: what counts as an example and how it is uncommented.
func TestValuesExamples(t *testing.T) {
	lines := strings.Split("# Prose: not an example.\n# name: x\nhub:\n  # HUB_X: prose\n  # primary:\n  #   # prose\n  #   endpoint: e\n  other: 1", "\n")
	got := valuesExamples(lines)
	if len(got) != 2 || len(got[0]) != 1 || got[0][0] != 1 || len(got[1]) != 3 || got[1][0] != 4 {
		t.Fatalf("examples %v, want [[1] [4 5 6]]", got)
	}
	want := "# Prose: not an example.\n# name: x\nhub:\n  # HUB_X: prose\n  primary:\n    # prose\n    endpoint: e\n  other: 1"
	if s := uncomment(lines, got[1]); s != want {
		t.Errorf("uncommented:\n%s\nwant:\n%s", s, want)
	}
}
