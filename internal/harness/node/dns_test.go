package node

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/harness/standin"
)

// TestCorefileUsesOnlyTheStandInsPlugins: every directive of the node's
// Corefile is a plugin the CoreDNS stand-in is built with
// (standin.CoreDNSPlugins). A directive without its plugin makes CoreDNS
// refuse the Corefile at start ("Unknown directive"), which the node suite
// would see only as cluster DNS never Ready.
func TestCorefileUsesOnlyTheStandInsPlugins(t *testing.T) {
	var corefile string
	for _, doc := range strings.Split(dnsManifest("coredns:test", "10.96.0.10"), "\n---\n") {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind == "ConfigMap" {
			corefile = cm.Data["Corefile"]
		}
	}
	if corefile == "" {
		t.Fatal("no ConfigMap with a Corefile in the DNS manifest")
	}
	directives := corefileDirectives(corefile)
	if len(directives) == 0 {
		t.Fatalf("no directive found in the Corefile:\n%s", corefile)
	}
	for _, d := range directives {
		if !slices.Contains(standin.CoreDNSPlugins, d) {
			t.Errorf("the Corefile uses %q, which the CoreDNS stand-in is not built with (standin.CoreDNSPlugins %q)", d, standin.CoreDNSPlugins)
		}
	}
}

// corefileDirectives are the first words of the lines directly inside a
// server block (depth 1), in order.
func corefileDirectives(corefile string) []string {
	var out []string
	depth := 0
	sc := bufio.NewScanner(strings.NewReader(corefile))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if depth == 1 && line != "}" {
			out = append(out, strings.Fields(line)[0])
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
	}
	return out
}

func TestCorefileDirectives(t *testing.T) {
	got := corefileDirectives(".:53 {\n  errors\n  kubernetes a {\n    pods insecure\n  }\n  cache 5\n}\n")
	if want := []string{"errors", "kubernetes", "cache"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
