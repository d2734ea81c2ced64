package workflowpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// TestRepositoryFollowsPolicy is the check itself: `make test` fails when a
// workflow here unpins an action, widens the top-level token or splices an
// event field into a script, or when Dependabot or SECURITY.md goes.
func TestRepositoryFollowsPolicy(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	findings, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("%s", f)
	}
}

// TestSecurityPolicyNamesEveryPin keeps SECURITY.md's "what is supported"
// the pins of pins.txt: a new or moved pin without a line there fails.
func TestSecurityPolicyNamesEveryPin(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	f, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile(filepath.Join(root, "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range f.Upstreams {
		for _, p := range up.Pins {
			want := p.Version
			if p.Default {
				want += " (default pin)"
			}
			if !strings.Contains(string(policy), want) {
				t.Errorf("SECURITY.md does not name %s %q: its table of what is supported must follow pins.txt", up.Name, want)
			}
		}
	}
}

const sha = "11d5960a326750d5838078e36cf38b85af677262"

func TestCheckWorkflowFindsEachBreach(t *testing.T) {
	for _, tc := range []struct {
		name, workflow string
		want           []string // substrings of the findings, in order; none: clean
	}{{
		name: "clean",
		workflow: `
permissions:
  contents: read
jobs:
  a:
    permissions:
      contents: write
    steps:
      - uses: actions/checkout@` + sha + ` # v4.4.0
      - uses: ./.github/actions/local
      - uses: docker://alpine@sha256:` + strings.Repeat("a", 64) + `
      - env:
          TITLE: ${{ github.event.pull_request.title }}
        run: echo "$TITLE"
`,
	}, {
		name:     "read-all",
		workflow: "permissions: read-all\njobs: {}\n",
	}, {
		name:     "no top-level permissions",
		workflow: "jobs: {}\n",
		want:     []string{":1: Token-Permissions: no top-level permissions"},
	}, {
		name:     "top-level write",
		workflow: "permissions:\n  contents: write\n  packages: read\njobs: {}\n",
		want:     []string{":1: Token-Permissions: top-level permissions grant contents: write"},
	}, {
		name:     "top-level write-all",
		workflow: "permissions: write-all\njobs: {}\n",
		want:     []string{"grant write-all"},
	}, {
		name:     "job write-all",
		workflow: "permissions: {}\njobs:\n  a:\n    permissions: write-all\n    steps: []\n",
		want:     []string{":4: Token-Permissions: job a asks for write-all"},
	}, {
		name: "tag, short SHA, no version comment, docker tag",
		workflow: `permissions: {}
jobs:
  a:
    steps:
      - uses: actions/checkout@v4
      - uses: actions/checkout@11d5960
      - uses: actions/checkout@` + sha + `
      - uses: actions/checkout@` + sha + ` # the latest
      - uses: docker://alpine:3
  b:
    uses: org/repo/.github/workflows/x.yml@main
`,
		want: []string{
			":5: Pinned-Dependencies: job a: actions/checkout@v4 is not pinned by a full commit SHA",
			":6: Pinned-Dependencies: job a: actions/checkout@11d5960 is not pinned",
			":7: Pinned-Dependencies: job a: actions/checkout@" + sha + " has no release in its comment",
			":8: Pinned-Dependencies: job a: actions/checkout@" + sha + " has no release",
			":9: Pinned-Dependencies: job a: docker://alpine:3 is not pinned by digest",
			":11: Pinned-Dependencies: job b: org/repo/.github/workflows/x.yml@main is not pinned",
		},
	}, {
		name: "event in run",
		workflow: `permissions: {}
jobs:
  a:
    steps:
      - run: echo "${{ github.event.issue.title }}"
      - run: |
          git checkout ${{ github.head_ref }}
      - run: echo "${{ github.ref_name }} ${{ inputs.x }}"
`,
		want: []string{
			":5: Dangerous-Workflow: job a: a run: script expands ${{ github.event.",
			":6: Dangerous-Workflow: job a: a run: script expands ${{ github.head_ref",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			findings, err := CheckWorkflow("w.yml", []byte(strings.TrimPrefix(tc.workflow, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != len(tc.want) {
				t.Fatalf("got %d findings, want %d:\n%v", len(findings), len(tc.want), findings)
			}
			for i, f := range findings {
				if !strings.Contains(f.String(), tc.want[i]) {
					t.Errorf("finding %d = %q, want it to contain %q", i, f, tc.want[i])
				}
			}
		})
	}
}

func TestCheckWorkflowRefusesWhatIsNotAWorkflow(t *testing.T) {
	for _, data := range []string{"- a\n- b\n", "a: [\n"} {
		if _, err := CheckWorkflow("w.yml", []byte(data)); err == nil || !strings.Contains(err.Error(), "w.yml") {
			t.Errorf("CheckWorkflow(%q) = %v, want an error naming w.yml", data, err)
		}
	}
}

func TestCheckWantsDependabotAndSecurityPolicy(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".github/workflows/ci.yml", "permissions: read-all\njobs: {}\n")
	findings, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{
		".github/dependabot.yml: Dependency-Update-Tool: missing",
		"SECURITY.md: Security-Policy: missing",
	}
	if len(got) != len(want) {
		t.Fatalf("findings = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, got[i], want[i])
		}
	}

	write(".github/dependabot.yml", "version: 2\nupdates:\n  - package-ecosystem: github-actions\n    directory: /\n")
	write("SECURITY.md", "# Security\n")
	findings, err = Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || !strings.Contains(findings[0].String(), `no update for package-ecosystem "gomod"`) {
		t.Errorf("findings = %v, want only the missing gomod update", findings)
	}
}
