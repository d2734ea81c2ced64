package image

import (
	"fmt"
	"time"
)

// Annotation keys. The org.opencontainers.image.* keys are the OCI image
// spec's pre-defined annotations; holdfast's own use the reverse domain of
// the project's GitHub organisation, as the spec asks of custom keys.
const (
	AnnotationCreated   = "org.opencontainers.image.created"
	AnnotationSource    = "org.opencontainers.image.source"
	AnnotationVersion   = "org.opencontainers.image.version"
	AnnotationRevision  = "org.opencontainers.image.revision"
	AnnotationTitle     = "org.opencontainers.image.title"
	AnnotationBaseName  = "org.opencontainers.image.base.name"
	AnnotationRefName   = "org.opencontainers.image.ref.name"
	AnnotationUpstream  = "io.github.holdfast-dist.upstream"
	AnnotationUpstreamV = "io.github.holdfast-dist.upstream.version"
	AnnotationSeries    = "io.github.holdfast-dist.series-hash"
	AnnotationTreeState = "io.github.holdfast-dist.tree-state"
	// containerd's image name key: `docker load` and `ctr import` of an
	// OCI layout take the image name from it.
	annotationContainerdName = "io.containerd.image.name"
)

// BaseName is what org.opencontainers.image.base.name says: the images
// are built on no base image, as Docker's official images say of theirs.
const BaseName = "scratch"

// Provenance is what an image says about where it comes from.
type Provenance struct {
	// Binary is the binary's name, e.g. karmada-controller-manager.
	Binary string
	// Version is holdfast's release, e.g. v1.18.2-holdfast.3.
	Version string
	// UpstreamModule and UpstreamVersion are the pin, e.g.
	// github.com/karmada-io/karmada v1.18.2.
	UpstreamModule, UpstreamVersion string
	// SeriesHash is the h1: hash of the patch series, overlay and carried
	// libraries (HOLDFAST-PROVENANCE's series-hash).
	SeriesHash string
	// Revision is holdfast's commit and TreeState its checkout's state
	// (clean, dirty, unknown), as the binaries record them.
	Revision, TreeState string
	// Source is holdfast's repository URL.
	Source string
	// Created is the build's fixed date, never the clock.
	Created time.Time
}

// Annotations returns the annotations of the index and of every manifest,
// which are also every config's labels.
func (p Provenance) Annotations() map[string]string {
	return map[string]string{
		AnnotationCreated:   p.Created.UTC().Format(time.RFC3339),
		AnnotationSource:    p.Source,
		AnnotationVersion:   p.Version,
		AnnotationRevision:  p.Revision,
		AnnotationTitle:     p.Binary,
		AnnotationBaseName:  BaseName,
		AnnotationUpstream:  p.UpstreamModule,
		AnnotationUpstreamV: p.UpstreamVersion,
		AnnotationSeries:    p.SeriesHash,
		AnnotationTreeState: p.TreeState,
	}
}

func (p Provenance) validate() error {
	for name, v := range map[string]string{
		"Binary": p.Binary, "Version": p.Version, "UpstreamModule": p.UpstreamModule,
		"UpstreamVersion": p.UpstreamVersion, "SeriesHash": p.SeriesHash, "Revision": p.Revision,
		"TreeState": p.TreeState, "Source": p.Source,
	} {
		if v == "" {
			return fmt.Errorf("image provenance: %s is empty", name)
		}
	}
	if p.Created.IsZero() {
		return fmt.Errorf("image provenance: Created is unset (want the build's fixed date)")
	}
	return nil
}

// SourceURL is the org.opencontainers.image.source of a Go module path
// hosted where its path says, e.g. https://github.com/holdfast-dist/holdfast.
func SourceURL(module string) string { return "https://" + module }
