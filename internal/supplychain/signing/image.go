package signing

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"regexp"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
)

// Attestation is a predicate to attach to an image.
type Attestation struct {
	// Type is cosign's --type: slsaprovenance1, spdxjson, cyclonedx, or a URI.
	Type string
	// Predicate is the predicate's file (for spdxjson the SPDX document).
	Predicate string
}

// Image is one image's OCI layout (internal/pipeline/image.WriteLayout's) to
// sign.
type Image struct {
	Layout string
	// Repository is the image's name under the registry (karmada-controller-manager)
	// and Tag its tag, which the layout's index must carry.
	Repository, Tag string
	// Attestations are attached to the index and to every platform manifest,
	// so a policy that resolves a platform's digest finds them too.
	Attestations []Attestation
}

// Signed says what SignImages added to a layout.
type Signed struct {
	Image
	Index     v1.Hash
	Platforms []v1.Hash
	// Tags are the cosign tags written into the layout, sorted.
	Tags []string
}

// cosignTag is how cosign names the manifests that hold a digest's
// signatures and attestations in a registry without the referrers API.
var cosignTag = regexp.MustCompile(`^sha256-[0-9a-f]{64}\.(sig|att)$`)

// IsCosignTag reports whether tag is one of cosign's signature or
// attestation tags.
func IsCosignTag(tag string) bool { return cosignTag.MatchString(tag) }

// SignImages signs every image's index and platform manifests, attaches its
// attestations, and writes the signature and attestation manifests into its
// layout (see the package documentation).
func (s *Signer) SignImages(ctx context.Context, images []Image) ([]Signed, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Identity == "" {
		return nil, errors.New("signing images: no Identity (the registry and namespace the images are published under)")
	}
	reg, err := startRegistry()
	if err != nil {
		return nil, err
	}
	defer reg.stop()

	var out []Signed
	for _, im := range images {
		signed, err := s.signImage(ctx, reg.addr, im)
		if err != nil {
			return nil, fmt.Errorf("signing %s:%s (%s): %w", im.Repository, im.Tag, im.Layout, err)
		}
		out = append(out, signed)
	}
	return out, nil
}

func (s *Signer) signImage(ctx context.Context, addr string, im Image) (Signed, error) {
	ref, err := name.NewTag(addr+"/"+im.Repository+":"+im.Tag, name.Insecure)
	if err != nil {
		return Signed{}, err
	}
	index, err := image.Push(ctx, im.Layout, ref)
	if err != nil {
		return Signed{}, err
	}
	platforms, err := platformDigests(im.Layout, index)
	if err != nil {
		return Signed{}, err
	}
	at := func(h v1.Hash) string { return ref.Context().Digest(h.String()).String() }

	args := append([]string{"sign"}, s.signFlags()...)
	args = append(args, "--recursive", "--allow-http-registry", "--sign-container-identity", s.Identity+"/"+im.Repository, at(index))
	if err := s.run(ctx, args...); err != nil {
		return Signed{}, err
	}
	for _, a := range im.Attestations {
		for _, h := range append([]v1.Hash{index}, platforms...) {
			args := append([]string{"attest"}, s.signFlags()...)
			args = append(args, "--allow-http-registry", "--type", a.Type, "--predicate", a.Predicate, at(h))
			if err := s.run(ctx, args...); err != nil {
				return Signed{}, err
			}
		}
	}

	// Copy back exactly what cosign wrote, by tag; check that every digest
	// got its signature (and its attestations) before the layout is touched.
	tags, err := remote.List(ref.Context(), remote.WithContext(ctx))
	if err != nil {
		return Signed{}, err
	}
	want := map[string]bool{}
	for _, h := range append([]v1.Hash{index}, platforms...) {
		want["sha256-"+h.Hex+".sig"] = true
		if len(im.Attestations) > 0 {
			want["sha256-"+h.Hex+".att"] = true
		}
	}
	var found []string
	for _, t := range tags {
		if IsCosignTag(t) {
			found = append(found, t)
			delete(want, t)
		}
	}
	if len(want) > 0 {
		var missing []string
		for t := range want {
			missing = append(missing, t)
		}
		sort.Strings(missing)
		return Signed{}, fmt.Errorf("cosign left no %v", missing)
	}
	sort.Strings(found)
	p, err := layout.FromPath(im.Layout)
	if err != nil {
		return Signed{}, err
	}
	for _, t := range found {
		img, err := remote.Image(ref.Context().Tag(t), remote.WithContext(ctx))
		if err != nil {
			return Signed{}, err
		}
		if err := p.ReplaceImage(img, match(t), layout.WithAnnotations(map[string]string{image.AnnotationRefName: t})); err != nil {
			return Signed{}, err
		}
	}
	return Signed{Image: im, Index: index, Platforms: platforms, Tags: found}, nil
}

// match selects a layout entry by its tag, so signing twice replaces rather
// than duplicates.
func match(tag string) func(v1.Descriptor) bool {
	return func(d v1.Descriptor) bool { return d.Annotations[image.AnnotationRefName] == tag }
}

func platformDigests(dir string, index v1.Hash) ([]v1.Hash, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := root.ImageIndex(index)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []v1.Hash
	for _, d := range im.Manifests {
		if d.MediaType == types.OCIManifestSchema1 || d.MediaType == types.DockerManifestSchema2 {
			out = append(out, d.Digest)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("index %s in %s has no platform manifest", index, dir)
	}
	return out, nil
}

// loopbackRegistry is go-containerregistry's in-memory registry, served on
// 127.0.0.1 only for as long as the signing runs.
type loopbackRegistry struct {
	addr string
	srv  *http.Server
}

func startRegistry() (*loopbackRegistry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the signing registry on 127.0.0.1: %w", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(discard{}, "", 0)), registry.WithReferrersSupport(true)),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(l) //nolint:errcheck // ends with Shutdown
	return &loopbackRegistry{addr: l.Addr().String(), srv: srv}, nil
}

func (r *loopbackRegistry) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
