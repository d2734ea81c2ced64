package image

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// emptyJSON is the config of an artifact that has none: the OCI image
// spec's "empty descriptor" content.
var emptyJSON = []byte("{}")

// sbomArtifact is the manifest attaching an SBOM to an index: its subject
// is the index, its one layer the SPDX document.
//
// The artifact type is carried as the config's media type, with the empty
// JSON as content: OCI 1.1 allows that form ("if artifactType is not set,
// config.mediaType is the artifact type"), and it is the only one
// go-containerregistry v0.20.6 reads, both in its registry's referrers API
// and in remote.Referrers, and the one ORAS wrote for OCI 1.0 registries.
// ggcr's mutate package cannot set an arbitrary config blob, so the
// manifest is a small partial.CompressedImageCore.
func sbomArtifact(subject v1.ImageIndex, sbom []byte, p Provenance) (v1.Image, error) {
	desc, err := partial.Descriptor(subject)
	if err != nil {
		return nil, err
	}
	mediaType, err := subject.MediaType()
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(sbom, SBOMMediaType)
	layerDesc, err := partial.Descriptor(layer)
	if err != nil {
		return nil, err
	}
	layerDesc.Annotations = map[string]string{AnnotationTitle: p.Binary + ".spdx.json"}
	configDigest, configSize, err := v1.SHA256(bytes.NewReader(emptyJSON))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: SBOMMediaType, Digest: configDigest, Size: configSize},
		Layers:        []v1.Descriptor{*layerDesc},
		Annotations:   map[string]string{AnnotationCreated: p.Annotations()[AnnotationCreated]},
		Subject:       &v1.Descriptor{MediaType: mediaType, Digest: desc.Digest, Size: desc.Size},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifactCore{manifest: raw, layer: layer, layerDigest: layerDesc.Digest})
}

type artifactCore struct {
	manifest    []byte
	layer       v1.Layer
	layerDigest v1.Hash
}

func (a *artifactCore) RawConfigFile() ([]byte, error) { return emptyJSON, nil }

func (a *artifactCore) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (a *artifactCore) RawManifest() ([]byte, error) { return a.manifest, nil }

func (a *artifactCore) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == a.layerDigest {
		return a.layer, nil
	}
	return nil, fmt.Errorf("the SBOM artifact has no blob %s", h)
}
