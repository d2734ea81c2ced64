package carry

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const self = "github.com/holdfast-dist/holdfast"

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const credSource = `package cred

import (
	"fmt" // formatting

	"github.com/holdfast-dist/holdfast/pkg/cred/internal/clock"
	"github.com/holdfast-dist/holdfast/pkg/metrics"
	"k8s.io/client-go/rest"
)

// Doc mentions "github.com/holdfast-dist/holdfast/pkg/cred" in a string, which stays.
const Doc = "github.com/holdfast-dist/holdfast/pkg/cred"

var _ = fmt.Sprint
var _ = clock.Now
var _ = metrics.X
var _ rest.Config
`

func TestLibs(t *testing.T) {
	root, tree := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{
		"pkg/cred/cred.go":                 credSource,
		"pkg/cred/cred_test.go":            "package cred_test\n\nimport _ \"github.com/holdfast-dist/holdfast/pkg/cred\"\n",
		"pkg/cred/internal/clock/clock.go": "package clock\n\nfunc Now() {}\n",
		"pkg/cred/testdata/token":          "not go",
		"pkg/metrics/metrics.go":           "package metrics\n\nvar X int\n",
		// Needs a module an upstream may lack: stays in holdfast's module.
		"pkg/cred/upgrade_hostonly_test.go": "package cred\n\nimport _ \"k8s.io/client-go/transport/spdy\"\n",
	})
	rw := Rewriter{Self: self, Upstream: "github.com/karmada-io/karmada", Libs: []string{"cred", "metrics"}}
	written, err := Libs(tree, root, rw)
	if err != nil {
		t.Fatalf("Libs: %v", err)
	}
	want := []string{
		"third_party/holdfast/cred/cred.go",
		"third_party/holdfast/cred/cred_test.go",
		"third_party/holdfast/cred/internal/clock/clock.go",
		"third_party/holdfast/cred/testdata/token",
		"third_party/holdfast/metrics/metrics.go",
	}
	if !reflect.DeepEqual(written, want) {
		t.Errorf("written = %v\nwant %v", written, want)
	}
	got := read(t, filepath.Join(tree, "third_party/holdfast/cred/cred.go"))
	// gofmt keeps the import groups; the rewritten paths sort into place.
	wantImports := `import (
	"fmt" // formatting

	"github.com/karmada-io/karmada/third_party/holdfast/cred/internal/clock"
	"github.com/karmada-io/karmada/third_party/holdfast/metrics"
	"k8s.io/client-go/rest"
)`
	if !strings.Contains(got, wantImports) {
		t.Errorf("rewritten cred.go:\n%s\nwant imports:\n%s", got, wantImports)
	}
	if !strings.Contains(got, `const Doc = "github.com/holdfast-dist/holdfast/pkg/cred"`) {
		t.Error("a string that is not an import was rewritten")
	}
	if got := read(t, filepath.Join(tree, "third_party/holdfast/cred/cred_test.go")); !strings.Contains(got, `"github.com/karmada-io/karmada/third_party/holdfast/cred"`) {
		t.Errorf("test file not rewritten:\n%s", got)
	}
	if got := read(t, filepath.Join(tree, "third_party/holdfast/cred/testdata/token")); got != "not go" {
		t.Errorf("non-Go file changed: %q", got)
	}
}

func TestLibsRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		libs  []string
		pre   map[string]string // files already in the tree
		want  string
	}{
		{
			name:  "import of a library that is not carried",
			files: map[string]string{"pkg/cred/cred.go": credSource, "pkg/metrics/m.go": "package metrics\n"},
			libs:  []string{"cred"},
			want:  "imports github.com/holdfast-dist/holdfast/pkg/metrics, which is not carried into example.com/up (carry lists: cred)",
		},
		{
			name:  "library without Go files",
			files: map[string]string{"pkg/empty/README.md": "todo"},
			libs:  []string{"empty"},
			want:  "has no Go files",
		},
		{
			name: "missing library",
			libs: []string{"missing"},
			want: "carry missing",
		},
		{
			name:  "unparsable Go",
			files: map[string]string{"pkg/bad/bad.go": "package bad\nimport (\n"},
			libs:  []string{"bad"},
			want:  "bad.go",
		},
		{
			name:  "upstream already has the folder",
			files: map[string]string{"pkg/m/m.go": "package m\n"},
			libs:  []string{"m"},
			pre:   map[string]string{"third_party/holdfast/m/x.go": "package m\n"},
			want:  "third_party/holdfast/m already exists in the upstream tree",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, tree := t.TempDir(), t.TempDir()
			write(t, root, tt.files)
			write(t, tree, tt.pre)
			_, err := Libs(tree, root, Rewriter{Self: self, Upstream: "example.com/up", Libs: tt.libs})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestOverlay(t *testing.T) {
	tests := []struct {
		name    string
		overlay map[string]string
		tree    map[string]string
		want    []string
		wantErr string
	}{
		{
			name:    "adds files as they are",
			overlay: map[string]string{"pkg/util/glue.go": "package util\n\nimport _ \"example.com/up/third_party/holdfast/cred\"\n"},
			tree:    map[string]string{"pkg/util/client.go": "package util\n"},
			want:    []string{"pkg/util/glue.go"},
		},
		{
			name:    "refuses to replace an upstream file",
			overlay: map[string]string{"pkg/util/client.go": "package util\n"},
			tree:    map[string]string{"pkg/util/client.go": "package util\n"},
			wantErr: "an upstream file is changed by a patch",
		},
		{
			name:    "refuses holdfast imports",
			overlay: map[string]string{"pkg/util/glue.go": "package util\n\nimport _ \"github.com/holdfast-dist/holdfast/pkg/cred\"\n"},
			wantErr: "imports github.com/holdfast-dist/holdfast/pkg/cred; overlay files import carried libraries by their path in the upstream module",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			overlay, tree := t.TempDir(), t.TempDir()
			write(t, overlay, tt.overlay)
			write(t, tree, tt.tree)
			got, err := Overlay(tree, overlay, self)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Overlay = %v, want %v", got, tt.want)
			}
			for _, f := range got {
				if read(t, filepath.Join(tree, f)) != tt.overlay[f] {
					t.Errorf("%s changed while copying", f)
				}
			}
		})
	}
	if got, err := Overlay(t.TempDir(), filepath.Join(t.TempDir(), "none"), self); err != nil || got != nil {
		t.Errorf("missing overlay: %v, %v", got, err)
	}
}
