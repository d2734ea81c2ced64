package slsa

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	provenance "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

func testBuild() Build {
	return Build{
		Release: "v0.2.0", Repository: "https://github.com/holdfast-dist/holdfast",
		Commit:    "0123456789abcdef0123456789abcdef01234567",
		GoVersion: "go1.26.8", Platforms: []string{"linux/amd64", "linux/arm64"},
		Builder: Builder{ID: LocalBuilderID},
		Upstreams: []Upstream{{
			Name: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2",
			Sum:      "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
			Revision: 3, HoldfastVersion: "v1.18.2-holdfast.3", Series: "patches/karmada/1.18",
			SeriesHash: "h1:LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=",
		}},
	}
}

func TestDirHashIsTheH1InHex(t *testing.T) {
	// The example of in-toto's DigestSet specification.
	got, err := DirHash("h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
	if err != nil || got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("DirHash = %q, %v", got, err)
	}
	for _, bad := range []string{"", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "h1:short", "h1:!!!!"} {
		if _, err := DirHash(bad); err == nil {
			t.Errorf("DirHash(%q) accepted", bad)
		}
	}
}

func TestStatementNamesThePinSeriesAndCommit(t *testing.T) {
	subjects := []Subject{
		{Name: "charts/karmada-1.18.2-holdfast.3.tgz", SHA256: strings.Repeat("b", 64)},
		{Name: "bin/karmada-v1.18.2/karmada-controller-manager", SHA256: strings.Repeat("a", 64)},
	}
	out, err := Statement(testBuild(), subjects)
	if err != nil {
		t.Fatal(err)
	}
	// Read back with in-toto's own bindings, as a verifier would.
	var st intoto.Statement
	if err := protojson.Unmarshal(out, &st); err != nil {
		t.Fatalf("in-toto cannot read the statement: %v\n%s", err, out)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	if st.GetType() != "https://in-toto.io/Statement/v1" || st.GetPredicateType() != PredicateType {
		t.Errorf("type %q predicate type %q", st.GetType(), st.GetPredicateType())
	}
	if len(st.Subject) != 2 || st.Subject[0].Name != subjects[1].Name {
		t.Errorf("subjects not sorted by name: %v", st.Subject)
	}
	pj, _ := protojson.Marshal(st.GetPredicate())
	var p provenance.Provenance
	if err := protojson.Unmarshal(pj, &p); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	deps := map[string]*intoto.ResourceDescriptor{}
	for _, d := range p.GetBuildDefinition().GetResolvedDependencies() {
		deps[d.GetName()] = d
	}
	if d := deps["github.com/karmada-io/karmada"]; d == nil || d.GetDigest()["dirHash"] != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" || d.GetUri() != "pkg:golang/github.com/karmada-io/karmada@v1.18.2" {
		t.Errorf("upstream module dependency = %v", d)
	}
	if d := deps["holdfast"]; d == nil || d.GetDigest()["gitCommit"] != testBuild().Commit {
		t.Errorf("holdfast commit dependency = %v", d)
	}
	if d := deps["patches/karmada/1.18"]; d == nil || d.GetDigest()["dirHash"] == "" {
		t.Errorf("series dependency = %v", d)
	}
	if got := p.GetBuildDefinition().GetExternalParameters().GetFields()["release"].GetStringValue(); got != "v0.2.0" {
		t.Errorf("externalParameters.release = %q", got)
	}
	if p.GetRunDetails().GetBuilder().GetId() != LocalBuilderID {
		t.Errorf("builder = %v", p.GetRunDetails().GetBuilder())
	}
}

func TestStatementBytesAreStable(t *testing.T) {
	// protojson randomises whitespace between runs of a program, not within
	// one; the check that matters is that the output is indented JSON that
	// re-indents to itself.
	out, err := Statement(testBuild(), []Subject{{Name: "x", SHA256: strings.Repeat("c", 64)}})
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := json.Indent(&again, bytes.TrimSpace(out), "", "  "); err != nil {
		t.Fatal(err)
	}
	again.WriteByte('\n')
	if !bytes.Equal(again.Bytes(), out) {
		t.Errorf("statement is not in canonical indentation:\n%s", out)
	}
}

func TestStatementRefusesBadInput(t *testing.T) {
	b := testBuild()
	if _, err := Statement(b, nil); err == nil {
		t.Error("a statement without subjects was written")
	}
	if _, err := Statement(b, []Subject{{Name: "x", SHA256: "zz"}}); err == nil {
		t.Error("a non-hex digest was accepted")
	}
	if _, err := Statement(b, []Subject{{Name: "x", SHA256: strings.Repeat("c", 64)}, {Name: "x", SHA256: strings.Repeat("d", 64)}}); err == nil {
		t.Error("one subject listed twice was accepted")
	}
	b.Upstreams[0].Sum = "not-a-hash"
	if _, err := Statement(b, []Subject{{Name: "x", SHA256: strings.Repeat("c", 64)}}); err == nil || !strings.Contains(err.Error(), "karmada") {
		t.Errorf("bad module sum: err = %v, want one naming the upstream", err)
	}
	b = testBuild()
	b.Builder.ID = ""
	if _, err := Predicate(b); err == nil {
		t.Error("a predicate without builder was written")
	}
}

func TestBuilderFromEnv(t *testing.T) {
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_WORKFLOW_REF": "holdfast-dist/holdfast/.github/workflows/release.yml@refs/tags/v0.2.0",
		"GITHUB_REPOSITORY":   "holdfast-dist/holdfast", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1",
	}
	b := BuilderFromEnv(func(k string) string { return env[k] })
	if b.ID != "https://github.com/holdfast-dist/holdfast/.github/workflows/release.yml@refs/tags/v0.2.0" ||
		b.InvocationID != "https://github.com/holdfast-dist/holdfast/actions/runs/42/attempts/1" {
		t.Errorf("Actions builder = %+v", b)
	}
	if b := BuilderFromEnv(func(string) string { return "" }); b.ID != LocalBuilderID {
		t.Errorf("local builder = %+v", b)
	}
}
