//go:build e2e

package signing

// These tests sign with the real cosign (built once into .cache/tools) and
// verify with the same stock commands an operator runs: cosign verify,
// verify-attestation, verify-blob, verify-blob-attestation.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/supplychain/signing/signingtest"
	"github.com/holdfast-dist/holdfast/internal/supplychain/slsa"
)

const identity = "ghcr.io/holdfast-dist"

// writeLayout writes a two-platform image index as internal/pipeline/image
// does: the index tagged with tag through org.opencontainers.image.ref.name.
func writeLayout(t *testing.T, dir, tag string) v1.Hash {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{image.AnnotationRefName: tag})); err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testSigner(t *testing.T) (*Signer, string, []string) {
	cosign := signingtest.Cosign(t)
	key, pub, env := signingtest.KeyPair(t, cosign)
	return &Signer{Cosign: cosign, Key: key, Identity: identity, Env: env}, pub, env
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSignedImagesVerifyWithStockCosign(t *testing.T) {
	s, pub, env := testSigner(t)
	work := t.TempDir()
	dir := filepath.Join(work, "layout")
	index := writeLayout(t, dir, "v1.18.2-holdfast.3")

	prov := filepath.Join(work, "provenance.json")
	pred, err := slsa.PredicateJSON(slsa.Build{
		Release: "v0.2.0", Repository: "https://github.com/holdfast-dist/holdfast", Commit: strings.Repeat("a", 40),
		Builder: slsa.Builder{ID: slsa.LocalBuilderID},
		Upstreams: []slsa.Upstream{{Name: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2",
			Sum: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", Revision: 3, HoldfastVersion: "v1.18.2-holdfast.3",
			Series: "patches/karmada/1.18", SeriesHash: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prov, pred, 0o644); err != nil {
		t.Fatal(err)
	}
	sbom := filepath.Join(work, "sbom.spdx.json")
	writeJSON(t, sbom, map[string]any{"spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "name": "karmada-controller-manager"})

	signed, err := s.SignImages(context.Background(), []Image{{
		Layout: dir, Repository: "karmada-controller-manager", Tag: "v1.18.2-holdfast.3",
		Attestations: []Attestation{{Type: "slsaprovenance1", Predicate: prov}, {Type: "spdxjson", Predicate: sbom}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(signed) != 1 || signed[0].Index != index || len(signed[0].Platforms) != 2 || len(signed[0].Tags) != 6 {
		t.Fatalf("signed = %+v, want the index and 2 platforms, each with a .sig and an .att", signed)
	}

	// Publish the layout to another registry, as `make images-push` does,
	// and verify there: the signatures travel with the layout.
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.NewTag(host+"/holdfast-dist/karmada-controller-manager:v1.18.2-holdfast.3", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := image.Push(context.Background(), dir, ref); err != nil {
		t.Fatal(err)
	}
	work2 := t.TempDir()
	for _, h := range append([]v1.Hash{index}, signed[0].Platforms...) {
		at := ref.Context().Digest(h.String()).String()
		out, stderr, err := signingtest.Run(env, work2, s.Cosign, "verify", "--key", pub, "--insecure-ignore-tlog", at)
		if err != nil {
			t.Fatalf("cosign verify %s: %v\n%s", at, err, stderr)
		}
		var payloads []struct {
			Critical struct {
				Identity struct {
					DockerReference string `json:"docker-reference"`
				} `json:"identity"`
				Image struct {
					Digest string `json:"docker-manifest-digest"`
				} `json:"image"`
			} `json:"critical"`
		}
		if err := json.Unmarshal([]byte(out), &payloads); err != nil || len(payloads) != 1 {
			t.Fatalf("cosign verify output %q: %v", out, err)
		}
		if p := payloads[0].Critical; p.Image.Digest != h.String() || p.Identity.DockerReference != identity+"/karmada-controller-manager" {
			t.Errorf("signature payload of %s = %+v, want its digest and the published name", h, p)
		}
		for typ, want := range map[string]string{"slsaprovenance1": slsa.PredicateType, "spdxjson": "https://spdx.dev/Document"} {
			out, stderr, err := signingtest.Run(env, work2, s.Cosign, "verify-attestation", "--key", pub, "--insecure-ignore-tlog", "--type", typ, at)
			if err != nil {
				t.Fatalf("cosign verify-attestation --type %s %s: %v\n%s", typ, at, err, stderr)
			}
			st := decodeEnvelope(t, out)
			if st.PredicateType != want || len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != h.Hex {
				t.Errorf("%s attestation of %s: predicate %q subject %v", typ, h, st.PredicateType, st.Subject)
			}
		}
	}

	// The attacker's view: another key does not verify, and neither does
	// an image nobody signed.
	_, otherPub, _ := signingtest.KeyPair(t, s.Cosign)
	if _, _, err := signingtest.Run(env, work2, s.Cosign, "verify", "--key", otherPub, "--insecure-ignore-tlog", ref.Context().Digest(index.String()).String()); err == nil {
		t.Error("cosign verify accepted the signature with another key")
	}
	unsigned := filepath.Join(work, "unsigned")
	uidx := writeLayout(t, unsigned, "v1.18.2-holdfast.3")
	uref, _ := name.NewTag(host+"/holdfast-dist/unsigned:v1.18.2-holdfast.3", name.Insecure)
	if _, err := image.Push(context.Background(), unsigned, uref); err != nil {
		t.Fatal(err)
	}
	if _, _, err := signingtest.Run(env, work2, s.Cosign, "verify", "--key", pub, "--insecure-ignore-tlog", uref.Context().Digest(uidx.String()).String()); err == nil {
		t.Error("cosign verify accepted an unsigned image")
	}

	// Signing again replaces the layout's signature entries.
	if _, err := s.SignImages(context.Background(), []Image{{Layout: dir, Repository: "karmada-controller-manager", Tag: "v1.18.2-holdfast.3"}}); err != nil {
		t.Fatal(err)
	}
	p, _ := layout.FromPath(dir)
	ii, _ := p.ImageIndex()
	im, _ := ii.IndexManifest()
	tags := map[string]int{}
	for _, d := range im.Manifests {
		if tag := d.Annotations[image.AnnotationRefName]; IsCosignTag(tag) {
			tags[tag]++
		}
	}
	for tag, n := range tags {
		if n != 1 {
			t.Errorf("layout holds %d entries tagged %s after signing twice", n, tag)
		}
	}
}

type statement struct {
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
}

func decodeEnvelope(t *testing.T, out string) statement {
	t.Helper()
	var env struct {
		Payload string `json:"payload"`
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(line), &env); err != nil {
		t.Fatalf("attestation output %q: %v", out, err)
	}
	raw, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var st statement
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSignedBlobsVerifyWithStockCosign(t *testing.T) {
	s, pub, env := testSigner(t)
	dir := t.TempDir()
	checksums := filepath.Join(dir, "CHECKSUMS")
	chart := filepath.Join(dir, "karmada-1.18.2-holdfast.3.tgz")
	outsider := filepath.Join(dir, "outsider")
	for f, data := range map[string]string{checksums: "abc  x\n", chart: "chart bytes", outsider: "not in the statement"} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundle, err := s.SignBlob(context.Background(), checksums)
	if err != nil {
		t.Fatal(err)
	}
	if bundle != checksums+BundleSuffix {
		t.Errorf("bundle %s", bundle)
	}
	if _, stderr, err := signingtest.Run(env, dir, s.Cosign, "verify-blob", "--key", pub, "--insecure-ignore-tlog", "--bundle", bundle, checksums); err != nil {
		t.Fatalf("cosign verify-blob: %v\n%s", err, stderr)
	}
	if err := os.WriteFile(checksums, []byte("abc  y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := signingtest.Run(env, dir, s.Cosign, "verify-blob", "--key", pub, "--insecure-ignore-tlog", "--bundle", bundle, checksums); err == nil {
		t.Error("cosign verify-blob accepted a changed CHECKSUMS")
	}

	sum := sha256.Sum256([]byte("chart bytes"))
	st, err := slsa.Statement(slsa.Build{
		Release: "v0.2.0", Repository: "https://github.com/holdfast-dist/holdfast", Commit: strings.Repeat("a", 40),
		Builder: slsa.Builder{ID: slsa.LocalBuilderID},
		Upstreams: []slsa.Upstream{{Name: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2",
			Sum: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", Series: "patches/karmada/1.18", SeriesHash: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}},
	}, []slsa.Subject{{Name: "charts/" + filepath.Base(chart), SHA256: hex.EncodeToString(sum[:])}})
	if err != nil {
		t.Fatal(err)
	}
	stPath := filepath.Join(dir, "provenance.intoto.json")
	if err := os.WriteFile(stPath, st, 0o644); err != nil {
		t.Fatal(err)
	}
	provBundle := filepath.Join(dir, "provenance.cosign.bundle")
	if err := s.AttestBlobs(context.Background(), stPath, provBundle); err != nil {
		t.Fatal(err)
	}
	verify := func(file string) error {
		_, stderr, err := signingtest.Run(env, dir, s.Cosign, "verify-blob-attestation", "--key", pub, "--insecure-ignore-tlog",
			"--bundle", provBundle, "--type", "slsaprovenance1", file)
		if err != nil {
			return fmt.Errorf("%w: %s", err, stderr)
		}
		return nil
	}
	if err := verify(chart); err != nil {
		t.Fatalf("cosign verify-blob-attestation of a subject: %v", err)
	}
	if err := verify(outsider); err == nil {
		t.Error("cosign verify-blob-attestation accepted a file the statement does not name")
	}
}
