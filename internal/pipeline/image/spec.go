package image

import (
	"fmt"
	"strings"
)

// Spec is how an upstream's own image holds one of its binaries. Holdfast's
// images follow it so that the upstream's charts and manifests, which name
// paths inside the image, run them unchanged. images/NAME/Dockerfile says
// the same for Docker users; a test keeps the two equal.
type Spec struct {
	// Path is where the binary goes; ${BINARY} stands for its name, as in
	// the Dockerfiles' ARG BINARY.
	Path string
	// Entrypoint is the image's entrypoint; empty when the upstream image
	// has none and its manifests name the binary in `command`.
	Entrypoint []string
	// WorkingDir is the upstream image's WORKDIR, if it sets one.
	WorkingDir string
	// Env is added to PATH, which every image sets.
	Env []string
	// TreeFiles are folders of the patched tree the upstream image carries,
	// copied to the same path under / in a layer of their own.
	TreeFiles []string
	// User is the upstream image's config User, empty when it sets none
	// (root). The upstream's manifests set their securityContext for that
	// user: another one, or a file capability to make up for not being
	// root, can fail where the upstream image runs (a root-only mount, or
	// allowPrivilegeEscalation: false, under which the kernel refuses to
	// exec a binary with file capabilities).
	User string
}

// Specs are the upstreams' image conventions, by pins.txt upstream name.
var Specs = map[string]Spec{
	// Karmada v1.18.2 (and v1.17.1, v1.16.0) cluster/images/Dockerfile:
	// FROM alpine, COPY ${BINARY} /bin/${BINARY}, and no ENTRYPOINT or
	// USER. Its chart, operator, karmadactl init and artifacts/deploy all
	// give `command: [/bin/<binary>, ...]`, so the path is the contract and
	// no entrypoint is set, as upstream sets none (alpine's CMD, /bin/sh,
	// has no shell to run here). No USER, and alpine's config has none: the
	// images run as root. karmada-search and karmada-metrics-adapter bind
	// the generic apiserver's default secure port, 443, under
	// artifacts/deploy's allowPrivilegeEscalation: false, which only root
	// can do there.
	"karmada": {
		Path: "/bin/${BINARY}",
	},
	// worker-operator v1.6.4 Dockerfile: FROM distroless static:nonroot,
	// WORKDIR /, the binary as /manager, files/ and scripts/ beside it with
	// MANIFEST_PATH and SCRIPT_PATH pointing at them (the gateway manifests
	// it deploys and the cleanup script it ships in a ConfigMap), USER
	// 65532:65532, ENTRYPOINT ["/manager"].
	"workeroperator": {
		Path:       "/manager",
		Entrypoint: []string{"/manager"},
		WorkingDir: "/",
		Env:        []string{"MANIFEST_PATH=/files/manifests", "SCRIPT_PATH=/scripts"},
		TreeFiles:  []string{"files", "scripts"},
		User:       "65532:65532",
	},
}

// SpecFor returns the image spec of a pins.txt upstream.
func SpecFor(upstream string) (Spec, error) {
	s, ok := Specs[upstream]
	if !ok {
		return Spec{}, fmt.Errorf("upstream %q has no image spec in internal/pipeline/image.Specs", upstream)
	}
	return s, nil
}

// BinaryPath is where binary goes in the image.
func (s Spec) BinaryPath(binary string) string {
	return strings.ReplaceAll(s.Path, "${BINARY}", binary)
}
