package workflowpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Finding is one broken rule, at a file and line.
type Finding struct {
	File string // relative to the repository root
	Line int    // 0 when the finding is about a whole file
	Rule string // the Scorecard check it would lower
	What string
}

func (f Finding) String() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", f.File, f.Rule, f.What)
	}
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.What)
}

// The Scorecard checks the rules belong to.
const (
	rulePinned      = "Pinned-Dependencies"
	rulePermissions = "Token-Permissions"
	ruleDangerous   = "Dangerous-Workflow"
	ruleUpdates     = "Dependency-Update-Tool"
	rulePolicy      = "Security-Policy"
)

// UpdatedEcosystems are the package ecosystems dependabot.yml must update:
// the actions the workflows pin and holdfast's own Go module.
var UpdatedEcosystems = []string{"github-actions", "gomod"}

// Check reads root's .github/workflows, .github/dependabot.yml and
// SECURITY.md and returns every broken rule, sorted by file and line. An
// error is returned only when a file cannot be read or parsed.
func Check(root string) ([]Finding, error) {
	var findings []Finding
	dir := filepath.Join(root, ".github", "workflows")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the workflows: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yml") || strings.HasSuffix(e.Name(), ".yaml")) {
			continue
		}
		rel := filepath.ToSlash(filepath.Join(".github", "workflows", e.Name()))
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f, err := CheckWorkflow(rel, data)
		if err != nil {
			return nil, err
		}
		findings = append(findings, f...)
	}
	f, err := checkDependabot(root)
	if err != nil {
		return nil, err
	}
	findings = append(findings, f...)
	if _, err := os.Stat(filepath.Join(root, "SECURITY.md")); errors.Is(err, fs.ErrNotExist) {
		findings = append(findings, Finding{File: "SECURITY.md", Rule: rulePolicy, What: "missing: say how to report a vulnerability and which versions are supported"})
	} else if err != nil {
		return nil, err
	}
	sort.SliceStable(findings, func(i, j int) bool {
		if findings[i].File != findings[j].File {
			return findings[i].File < findings[j].File
		}
		return findings[i].Line < findings[j].Line
	})
	return findings, nil
}

var (
	shaRef      = regexp.MustCompile(`^[^@\s]+@[0-9a-f]{40}$`)
	versionNote = regexp.MustCompile(`^#\s*v\d+\.\d+\.\d+\S*$`)
	digestRef   = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	// untrusted are the expressions an outsider controls (an issue or pull
	// request title, body, branch name...): Scorecard's Dangerous-Workflow
	// list comes down to these two roots.
	untrusted = regexp.MustCompile(`\$\{\{[^}]*\b(github\.event\.|github\.head_ref)`)
)

// CheckWorkflow checks one workflow file; name is how findings call it.
func CheckWorkflow(name string, data []byte) ([]Finding, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a workflow (a YAML mapping)", name)
	}
	top := doc.Content[0]
	var findings []Finding
	add := func(line int, rule, format string, args ...any) {
		findings = append(findings, Finding{File: name, Line: line, Rule: rule, What: fmt.Sprintf(format, args...)})
	}

	if key, perms := lookup(top, "permissions"); perms == nil {
		add(top.Line, rulePermissions, "no top-level permissions: the token gets the repository's default, often write; set `permissions: contents: read` and grant writes per job")
	} else if what := writes(perms); what != "" {
		add(key.Line, rulePermissions, "top-level permissions grant %s: keep the top level read-only and grant writes in the job that needs them", what)
	}

	_, jobs := lookup(top, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return findings, nil
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		jobName, job := jobs.Content[i].Value, jobs.Content[i+1]
		if job.Kind != yaml.MappingNode {
			continue
		}
		if _, perms := lookup(job, "permissions"); perms != nil && perms.Kind == yaml.ScalarNode && perms.Value == "write-all" {
			add(perms.Line, rulePermissions, "job %s asks for write-all: name the scopes it writes", jobName)
		}
		if _, uses := lookup(job, "uses"); uses != nil {
			if what := unpinned(uses); what != "" {
				add(uses.Line, rulePinned, "job %s: %s", jobName, what)
			}
		}
		_, steps := lookup(job, "steps")
		if steps == nil || steps.Kind != yaml.SequenceNode {
			continue
		}
		for _, step := range steps.Content {
			if step.Kind != yaml.MappingNode {
				continue
			}
			if _, uses := lookup(step, "uses"); uses != nil {
				if what := unpinned(uses); what != "" {
					add(uses.Line, rulePinned, "job %s: %s", jobName, what)
				}
			}
			if _, run := lookup(step, "run"); run != nil {
				if m := untrusted.FindString(run.Value); m != "" {
					add(run.Line, ruleDangerous, "job %s: a run: script expands %s...: an outsider controls that value; pass it through env: and quote \"$VAR\"", jobName, m)
				}
			}
		}
	}
	return findings, nil
}

// unpinned says what is wrong with a uses: value, or "" when it is pinned.
func unpinned(uses *yaml.Node) string {
	ref := uses.Value
	switch {
	case strings.HasPrefix(ref, "./"):
		return "" // this repository's own action, at the same commit
	case strings.HasPrefix(ref, "docker://"):
		if digestRef.MatchString(ref) {
			return ""
		}
		return fmt.Sprintf("%s is not pinned by digest (@sha256:...)", ref)
	case !shaRef.MatchString(ref):
		return fmt.Sprintf("%s is not pinned by a full commit SHA: use owner/repo@<40-hex SHA> # vX.Y.Z", ref)
	case !versionNote.MatchString(strings.TrimSpace(uses.LineComment)):
		return fmt.Sprintf("%s has no release in its comment: add # vX.Y.Z (the tag the SHA is) so a reader and Dependabot see the version", ref)
	}
	return ""
}

// writes says which write access a permissions value grants, or "".
func writes(perms *yaml.Node) string {
	switch perms.Kind {
	case yaml.ScalarNode:
		if perms.Value == "read-all" {
			return ""
		}
		return perms.Value
	case yaml.MappingNode:
		var w []string
		for i := 0; i+1 < len(perms.Content); i += 2 {
			if v := perms.Content[i+1].Value; v != "read" && v != "none" {
				w = append(w, perms.Content[i].Value+": "+v)
			}
		}
		return strings.Join(w, ", ")
	}
	return "an unreadable value"
}

// lookup returns the key and value nodes of key in mapping m, or nils.
func lookup(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// checkDependabot requires .github/dependabot.yml to update every
// ecosystem in UpdatedEcosystems.
func checkDependabot(root string) ([]Finding, error) {
	const rel = ".github/dependabot.yml"
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return []Finding{{File: rel, Rule: ruleUpdates, What: fmt.Sprintf("missing: nothing bumps the pinned SHAs or the Go modules (want updates for %s)", strings.Join(UpdatedEcosystems, ", "))}}, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Updates []struct {
			Ecosystem string `yaml:"package-ecosystem"`
		} `yaml:"updates"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	var have []string
	for _, u := range cfg.Updates {
		have = append(have, u.Ecosystem)
	}
	var findings []Finding
	for _, want := range UpdatedEcosystems {
		if !slices.Contains(have, want) {
			findings = append(findings, Finding{File: rel, Rule: ruleUpdates, What: fmt.Sprintf("no update for package-ecosystem %q", want)})
		}
	}
	return findings, nil
}
