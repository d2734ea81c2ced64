package slsa

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	provenance "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// PredicateType is SLSA provenance v1's predicate type (cosign's
// `--type slsaprovenance1`).
const PredicateType = "https://slsa.dev/provenance/v1"

// BuildType names holdfast's release build: docs/release.md#provenance
// says what its parameters mean. A new major of the build (parameters
// renamed or their meaning changed) gets a new URI.
const BuildType = "https://github.com/holdfast-dist/holdfast/blob/main/docs/release.md#provenance-v1"

// LocalBuilderID is the builder of a release made outside CI: a maintainer's
// `make release`. It promises nothing about the machine (SLSA build level 1);
// the GitHub Actions release workflow's id is its workflow file at a tag.
const LocalBuilderID = "https://github.com/holdfast-dist/holdfast/blob/main/docs/release.md#local-builder"

// Upstream is one shipped pin.
type Upstream struct {
	// Name is the upstream's short name in pins.txt (karmada).
	Name string
	// Module and Version are the pinned Go module (github.com/karmada-io/karmada v1.18.2).
	Module, Version string
	// Sum is the module's go.sum h1: hash.
	Sum string
	// Revision is holdfast's revision of the pin; HoldfastVersion its
	// version string (v1.18.2-holdfast.3).
	Revision        int
	HoldfastVersion string
	// Series is the patch series folder (patches/karmada/1.18) and
	// SeriesHash the h1: hash of series, overlay and carried libraries the
	// binaries are stamped with.
	Series, SeriesHash string
}

// Builder says who ran the build.
type Builder struct {
	// ID is the builder's URI: the release workflow at its ref in CI,
	// LocalBuilderID elsewhere.
	ID string
	// InvocationID names this run (the workflow run's URL), when known.
	InvocationID string
}

// BuilderFromEnv returns the GitHub Actions workflow that is running, from
// the variables Actions sets, or the local builder. HOLDFAST_BUILDER_ID
// overrides the id (another CI system).
func BuilderFromEnv(getenv func(string) string) Builder {
	if id := getenv("HOLDFAST_BUILDER_ID"); id != "" {
		return Builder{ID: id, InvocationID: getenv("HOLDFAST_BUILD_INVOCATION")}
	}
	if getenv("GITHUB_ACTIONS") == "true" && getenv("GITHUB_WORKFLOW_REF") != "" {
		server := strings.TrimSuffix(getenv("GITHUB_SERVER_URL"), "/")
		b := Builder{ID: server + "/" + getenv("GITHUB_WORKFLOW_REF")}
		if run := getenv("GITHUB_RUN_ID"); run != "" {
			b.InvocationID = fmt.Sprintf("%s/%s/actions/runs/%s/attempts/%s", server, getenv("GITHUB_REPOSITORY"), run, getenv("GITHUB_RUN_ATTEMPT"))
		}
		return b
	}
	return Builder{ID: LocalBuilderID}
}

// Build is what a release was built from.
type Build struct {
	// Release is holdfast's release version (v0.2.0).
	Release string
	// Repository is holdfast's source (https://github.com/holdfast-dist/holdfast)
	// and Commit the commit the release was built from.
	Repository, Commit string
	Upstreams          []Upstream
	// GoVersion is the toolchain that built the binaries (go1.26.8).
	GoVersion string
	// Platforms are the images' platforms (linux/amd64, linux/arm64).
	Platforms []string
	Builder   Builder
}

// Subject is one artifact the provenance is about.
type Subject struct {
	// Name is the file's path in the release folder, or an image
	// reference without its digest.
	Name string
	// SHA256 is the lowercase hex digest of the file or manifest.
	SHA256 string
}

// Predicate returns the SLSA provenance v1 predicate of b.
func Predicate(b Build) (*provenance.Provenance, error) {
	if b.Release == "" || b.Repository == "" || b.Commit == "" || len(b.Upstreams) == 0 || b.Builder.ID == "" {
		return nil, errors.New("provenance: release, repository, commit, builder and at least one upstream are required")
	}
	ups := append([]Upstream(nil), b.Upstreams...)
	sort.Slice(ups, func(i, j int) bool { return ups[i].Name < ups[j].Name })

	var upstreamParams []any
	deps := []*intoto.ResourceDescriptor{{
		Name:   "holdfast",
		Uri:    "git+" + b.Repository + "@" + b.Commit,
		Digest: map[string]string{"gitCommit": b.Commit},
	}}
	for _, u := range ups {
		modHash, err := DirHash(u.Sum)
		if err != nil {
			return nil, fmt.Errorf("provenance of %s %s: module sum: %w", u.Name, u.Version, err)
		}
		seriesHash, err := DirHash(u.SeriesHash)
		if err != nil {
			return nil, fmt.Errorf("provenance of %s %s: series hash: %w", u.Name, u.Version, err)
		}
		upstreamParams = append(upstreamParams, map[string]any{
			"name": u.Name, "module": u.Module, "version": u.Version,
			"revision": float64(u.Revision), "holdfastVersion": u.HoldfastVersion, "series": u.Series,
		})
		deps = append(deps,
			&intoto.ResourceDescriptor{
				Name:        u.Module,
				Uri:         "pkg:golang/" + u.Module + "@" + u.Version,
				Digest:      map[string]string{"dirHash": modHash},
				Annotations: mustStruct(map[string]any{"goSum": u.Sum}),
			},
			&intoto.ResourceDescriptor{
				Name:        u.Series,
				Uri:         "git+" + b.Repository + "@" + b.Commit + "#" + u.Series,
				Digest:      map[string]string{"dirHash": seriesHash},
				Annotations: mustStruct(map[string]any{"seriesHash": u.SeriesHash, "holdfastVersion": u.HoldfastVersion}),
			})
	}
	platforms := make([]any, len(b.Platforms))
	for i, p := range b.Platforms {
		platforms[i] = p
	}
	ext, err := structpb.NewStruct(map[string]any{
		"release":    b.Release,
		"repository": b.Repository,
		"commit":     b.Commit,
		"upstreams":  upstreamParams,
	})
	if err != nil {
		return nil, err
	}
	internal, err := structpb.NewStruct(map[string]any{"goVersion": b.GoVersion, "platforms": platforms})
	if err != nil {
		return nil, err
	}
	p := &provenance.Provenance{
		BuildDefinition: &provenance.BuildDefinition{
			BuildType:            BuildType,
			ExternalParameters:   ext,
			InternalParameters:   internal,
			ResolvedDependencies: deps,
		},
		RunDetails: &provenance.RunDetails{
			Builder: &provenance.Builder{Id: b.Builder.ID},
		},
	}
	if b.Builder.InvocationID != "" {
		p.RunDetails.Metadata = &provenance.BuildMetadata{InvocationId: b.Builder.InvocationID}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	return p, nil
}

// PredicateJSON is the predicate alone, for `cosign attest --predicate`,
// which wraps it in a statement whose subject is the image.
func PredicateJSON(b Build) ([]byte, error) {
	p, err := Predicate(b)
	if err != nil {
		return nil, err
	}
	return marshal(p)
}

// Statement is an in-toto v1 statement of b's provenance about subjects,
// for `cosign attest-blob --statement`.
func Statement(b Build, subjects []Subject) ([]byte, error) {
	p, err := Predicate(b)
	if err != nil {
		return nil, err
	}
	pj, err := protojson.Marshal(p)
	if err != nil {
		return nil, err
	}
	pred := &structpb.Struct{}
	if err := protojson.Unmarshal(pj, pred); err != nil {
		return nil, err
	}
	st := &intoto.Statement{Type: intoto.StatementTypeUri, PredicateType: PredicateType, Predicate: pred}
	seen := map[string]bool{}
	for _, s := range subjects {
		if seen[s.Name] {
			return nil, fmt.Errorf("provenance: subject %q listed twice", s.Name)
		}
		seen[s.Name] = true
		st.Subject = append(st.Subject, &intoto.ResourceDescriptor{Name: s.Name, Digest: map[string]string{"sha256": s.SHA256}})
	}
	sort.Slice(st.Subject, func(i, j int) bool { return st.Subject[i].Name < st.Subject[j].Name })
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("provenance statement: %w", err)
	}
	return marshal(st)
}

// marshal writes protojson with stable bytes: protojson deliberately
// varies its whitespace between runs so that no one depends on it, and the
// release's files must be the same for the same inputs; json.Indent
// rewrites every byte of whitespace and keeps the field order.
func marshal(m proto.Message) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// DirHash converts a go.sum h1: hash to in-toto's dirHash digest: the same
// SHA-256, in lowercase hex instead of base64.
func DirHash(h1 string) (string, error) {
	b64, ok := strings.CutPrefix(h1, "h1:")
	if !ok {
		return "", fmt.Errorf("%q is not an h1: hash", h1)
	}
	sum, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sum) != 32 {
		return "", fmt.Errorf("%q is not an h1: hash (want base64 of 32 bytes)", h1)
	}
	return hex.EncodeToString(sum), nil
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err) // only called with string values
	}
	return s
}
