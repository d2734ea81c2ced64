// Command licensed is the Go binary whose SBOM internal/pipeline/image's
// TestSBOMRealModuleCache reads against the machine's module cache: it
// links modules of holdfast's go.mod under the licences Go binaries most
// often carry (BSD-3-Clause: golang.org/x and the standard library;
// Apache-2.0: Kubernetes and go-containerregistry; MIT: sigs.k8s.io/yaml)
// and one whose licence the detector is not trusted on (go-spew's ISC).
package main

import (
	"fmt"

	"github.com/davecgh/go-spew/spew"
	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/mod/semver"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func main() {
	ref, err := name.ParseReference("ghcr.io/holdfast-dist/hello:v1")
	out, _ := yaml.Marshal(map[string]string{"version": semver.Canonical("v1.2")})
	fmt.Println(ref, err, string(out), *ptr.To(1))
	spew.Dump(ref)
}
