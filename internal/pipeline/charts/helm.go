package charts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Helm runs the helm command line.
type Helm struct {
	// Path is the helm binary.
	Path string
	// Env is helm's environment; nil inherits holdfast's, so that `helm
	// push` finds the credentials of `helm registry login`. Tests point
	// HELM_CACHE_HOME, HELM_CONFIG_HOME and HELM_DATA_HOME at temporary
	// folders instead.
	Env []string
}

// Run runs helm with args and returns what it wrote to stdout. A failure's
// error holds helm's arguments and stderr, which name the chart, value or
// registry at fault; holdfast never hands helm a credential, so none can
// appear there (push credentials come from `helm registry login`).
func (h Helm) Run(ctx context.Context, args ...string) ([]byte, error) {
	stdout, _, err := h.run(ctx, args...)
	return stdout, err
}

func (h Helm) run(ctx context.Context, args ...string) (stdout, stderr []byte, err error) {
	if h.Path == "" {
		return nil, nil, errors.New("no helm binary given")
	}
	cmd := exec.CommandContext(ctx, h.Path, args...)
	cmd.Env = h.Env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return out.Bytes(), errOut.Bytes(), fmt.Errorf("helm %s: %w", strings.Join(args, " "), context.Cause(ctx))
		}
		return out.Bytes(), errOut.Bytes(), fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), errOut.Bytes(), nil
}

// Package packages the chart in dir with the given version and appVersion
// into out and returns the archive's path. The versions are flags, as
// upstream Karmada's hack/package-helm-chart.sh passes them, so the staged
// Chart.yaml is never edited.
func (h Helm) Package(ctx context.Context, dir, version, appVersion, out string) (string, error) {
	if _, err := h.Run(ctx, "package", dir, "--version", version, "--app-version", appVersion, "--destination", out); err != nil {
		return "", err
	}
	path := archivePath(out, filepath.Base(dir), version)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("helm package %s: no archive %s: %w", dir, path, err)
	}
	return path, nil
}

// Pushed is a chart archive in an OCI registry.
type Pushed struct {
	// Ref is <registry>/<name>:<version>, without the oci:// scheme.
	Ref string
	// Digest is the manifest's digest, sha256:...
	Digest string
}

var pushedDigest = regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})$`)

// Push pushes the package to registry, an OCI repository prefix such as
// oci://ghcr.io/holdfast-dist/charts (the scheme may be left out); the chart
// lands at <registry>/<name>:<version>. plainHTTP talks HTTP, for a local
// registry.
func (h Helm) Push(ctx context.Context, pkg Package, registry string, plainHTTP bool) (Pushed, error) {
	if err := checkRegistry(registry); err != nil {
		return Pushed{}, err
	}
	remote := OCIRegistry(registry)
	args := []string{"push", pkg.Path, remote}
	if plainHTTP {
		args = append(args, "--plain-http")
	}
	stdout, stderr, err := h.run(ctx, args...)
	if err != nil {
		return Pushed{}, err
	}
	// helm prints "Pushed: REF" and "Digest: D" through its registry
	// client, which writes to stderr.
	m := pushedDigest.FindSubmatch(append(stdout, stderr...))
	if m == nil {
		return Pushed{}, fmt.Errorf("helm push %s %s: no digest in its output:\n%s%s", pkg.Path, remote, stdout, stderr)
	}
	return Pushed{Ref: strings.TrimPrefix(remote, "oci://") + "/" + pkg.Chart.Name + ":" + pkg.Version, Digest: string(m[1])}, nil
}

// checkRegistry refuses a registry that carries credentials: they would be
// echoed in every message about it.
func checkRegistry(registry string) error {
	if host, _, _ := strings.Cut(strings.TrimPrefix(OCIRegistry(registry), "oci://"), "/"); strings.Contains(host, "@") {
		return errors.New("the registry must not carry credentials: log in with `helm registry login` instead")
	}
	return nil
}

// OCIRegistry returns registry with the oci:// scheme helm needs and no
// trailing slash.
func OCIRegistry(registry string) string {
	registry = strings.TrimSuffix(registry, "/")
	if !strings.HasPrefix(registry, "oci://") {
		registry = "oci://" + registry
	}
	return registry
}
