package imagebuild

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Pushed is one image sent to a registry.
type Pushed struct {
	Ref    name.Tag
	Digest v1.Hash
}

// PushOptions say where the images are and where they go.
type PushOptions struct {
	// Out is the images' folder Build wrote to.
	Out string
	// Registry receives <registry>/<binary>:<holdfast version>.
	Registry string
	// Binaries limits the push; empty means all of the upstream's.
	Binaries []string
	// Name options for the references: name.Insecure for a plain-HTTP
	// registry.
	Name []name.Option
	// Remote options: transport, authentication.
	Remote []remote.Option
}

// Push sends a pin's images (their OCI layouts, with the SBOMs) to a
// registry. holdfastVersion is the pin's VersionString, the tag.
func Push(ctx context.Context, o PushOptions, up *pins.Upstream, pin pins.Pin) ([]Pushed, error) {
	if o.Registry == "" {
		return nil, fmt.Errorf("no registry to push to")
	}
	names, err := Binaries(up, o.Binaries)
	if err != nil {
		return nil, err
	}
	var pushed []Pushed
	for _, binary := range names {
		dir := LayoutDir(o.Out, up, pin.Version, binary)
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("no image of %s %s in %s: run `holdfast images build --upstream %s` first", binary, pin.Version, dir, up.Name)
		}
		ref, err := Reference(o.Registry, binary, pin.VersionString(), o.Name...)
		if err != nil {
			return nil, err
		}
		digest, err := image.Push(ctx, dir, ref, o.Remote...)
		if err != nil {
			return nil, err
		}
		pushed = append(pushed, Pushed{Ref: ref, Digest: digest})
	}
	return pushed, nil
}
