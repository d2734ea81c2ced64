package image_test

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	op, args string
}

// finalStage reads a Dockerfile and returns the instructions after its
// last FROM, and every instruction.
func finalStage(t *testing.T, path string) (final, all []instruction) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pending string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, pending = pending+line, ""
		op, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(op), strings.TrimSpace(args)}
		all = append(all, in)
		if in.op == "FROM" {
			final = nil
			continue
		}
		final = append(final, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return final, all
}

// words splits on blanks outside double quotes and drops the quotes.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, started = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

var argRef = regexp.MustCompile(`\$\{([A-Z_]+)\}`)

// TestDockerfiles checks that images/NAME/Dockerfile builds, for every
// binary pins.txt lists, the image internal/pipeline/image assembles: the
// binary at the Spec's path, the same entrypoint, working folder, user,
// environment, tree files and labels, and no file capability (with the build
// args set to the provenance the Go build would record).
func TestDockerfiles(t *testing.T) {
	root := repoRoot(t)
	pf, err := pins.Load(filepath.Join(root, pins.FileName))
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	source := image.SourceURL(modfile.ModulePath(goMod))
	for _, up := range pf.Upstreams {
		t.Run(up.Name, func(t *testing.T) {
			spec, err := image.SpecFor(up.Name)
			if err != nil {
				t.Fatal(err)
			}
			final, all := finalStage(t, filepath.Join(root, "images", up.Name, "Dockerfile"))
			byOp := map[string][]string{}
			for _, in := range final {
				byOp[in.op] = append(byOp[in.op], in.args)
			}

			var entrypoint []string
			if e := byOp["ENTRYPOINT"]; len(e) > 0 {
				if err := json.Unmarshal([]byte(e[len(e)-1]), &entrypoint); err != nil {
					t.Errorf("ENTRYPOINT %s is not the exec (JSON) form: %v", e, err)
				}
			}
			if !slices.Equal(entrypoint, spec.Entrypoint) {
				t.Errorf("ENTRYPOINT %q, Spec %q", entrypoint, spec.Entrypoint)
			}
			// An empty Spec.User is no USER instruction, as upstream's.
			if u := byOp["USER"]; (spec.User == "" && len(u) != 0) || (spec.User != "" && (len(u) != 1 || u[0] != spec.User)) {
				t.Errorf("USER %q, Spec %q", u, spec.User)
			}
			if w := byOp["WORKDIR"]; (len(w) == 0 && spec.WorkingDir != "") || (len(w) > 0 && w[len(w)-1] != spec.WorkingDir) {
				t.Errorf("WORKDIR %q, Spec %q", w, spec.WorkingDir)
			}
			var env []string
			for _, e := range byOp["ENV"] {
				env = append(env, words(e)...)
			}
			if want := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, spec.Env...); !slices.Equal(env, want) {
				t.Errorf("ENV %q, want %q", env, want)
			}
			if byOp["CMD"] != nil {
				t.Errorf("CMD %q: the Go build sets none", byOp["CMD"])
			}

			copies := map[string]string{} // destination -> source words
			for _, c := range byOp["COPY"] {
				w := words(c)
				copies[w[len(w)-1]] = strings.Join(w[:len(w)-1], " ")
			}
			if src, ok := copies[spec.Path]; !ok || !strings.HasSuffix(src, "/${BINARY}") {
				t.Errorf("no COPY of ${BINARY} to %s (COPYs: %v)", spec.Path, copies)
			}
			for _, dir := range spec.TreeFiles {
				if src := copies["/"+dir+"/"]; src != "--from=tree "+dir+"/" {
					t.Errorf("tree folder %s: COPY source %q, want --from=tree %s/", dir, src, dir)
				}
			}
			// Upstream's images carry no file capability, so neither does
			// any stage that feeds this one.
			for _, in := range all {
				if in.op == "RUN" && (strings.Contains(in.args, "setcap") || strings.Contains(in.args, "setfattr")) {
					t.Errorf("RUN %s sets a file capability or attribute", in.args)
				}
			}

			for _, pkg := range up.Build {
				binary := up.BinaryName(pkg)
				p := image.Provenance{
					Binary: binary, Version: "v9.9.9-holdfast.9", UpstreamModule: up.Module, UpstreamVersion: "v9.9.9",
					SeriesHash: "h1:DLGGQE4gH26vaJSej2j+HdClOtLqH7YjuQF//5JL5GY=", Revision: "3b03d41f00c0ffee", TreeState: "dirty",
					Source: source, Created: created,
				}
				args := map[string]string{
					"BINARY": binary, "VERSION": p.Version, "UPSTREAM_VERSION": p.UpstreamVersion, "SERIES_HASH": p.SeriesHash,
					"REVISION": p.Revision, "TREE_STATE": p.TreeState, "CREATED": "2026-12-02T10:48:45Z",
				}
				labels := map[string]string{}
				for _, l := range byOp["LABEL"] {
					for _, kv := range words(l) {
						k, v, _ := strings.Cut(kv, "=")
						labels[k] = argRef.ReplaceAllStringFunc(v, func(ref string) string {
							name := argRef.FindStringSubmatch(ref)[1]
							if _, ok := args[name]; !ok {
								t.Errorf("label %s uses ${%s}, which the Go build has no value for", k, name)
							}
							return args[name]
						})
					}
				}
				if want := p.Annotations(); !maps.Equal(labels, want) {
					t.Errorf("%s: labels\n got %v\nwant %v", binary, labels, want)
				}
			}
			// worker-operator's single binary is the ARG's default.
			if len(up.Build) == 1 {
				want := "BINARY=" + up.BinaryName(up.Build[0])
				if !slices.ContainsFunc(byOp["ARG"], func(a string) bool { return a == want }) {
					t.Errorf("ARG %s missing: docker build would need --build-arg for the only binary", want)
				}
			}
		})
	}
}
