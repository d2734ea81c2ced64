package charts

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/holdfast-dist/holdfast/internal/pipeline/imagebuild"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// ImageRepositoryPrefix begins the repository of every image holdfast
// builds in the charts' values (registry ghcr.io, repository
// holdfast-dist/<binary>), and only of those.
const ImageRepositoryPrefix = "holdfast-dist/"

// imageDigests reads the index digest of every image of pin from the OCI
// layouts under images, by binary. No layout at all gives nil: the chart
// keeps its tags (a developer's `make charts` without `make images`). Some
// layouts but not all is an error, as is a layout of another holdfast
// version: a chart must not pin a mix, nor a stale build.
func imageDigests(images string, up *pins.Upstream, pin pins.Pin) (map[string]string, error) {
	binaries, err := imagebuild.Binaries(up, nil)
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	var missing []string
	for _, b := range binaries {
		d, err := imagebuild.ReadDigests(images, up, pin, b)
		if errors.Is(err, imagebuild.ErrNoLayout) {
			missing = append(missing, b)
			continue
		}
		if err != nil {
			return nil, err
		}
		digests[b] = d.Index.String()
	}
	switch {
	case len(missing) == len(binaries):
		return nil, nil
	case len(missing) > 0:
		return nil, fmt.Errorf("images of %s %s in %s are partial: no OCI layout for %s (run `make images`, or build the charts with --tags)",
			up.Name, pin.Version, images, strings.Join(missing, ", "))
	}
	return digests, nil
}

// SetImageDigests sets, in the staged chart's values.yaml, the digest of
// each image block whose repository is holdfast-dist/<binary>, for every
// binary in digests: its `digest:` key if the block has one, else a new
// one right after `repository:`. The chart's image helpers render
// registry/repository@digest when a digest is set, so the tag stays as it
// was, for reading. Text, not YAML re-encoding: the comments and anchors of
// upstream's values.yaml stay as they are.
func SetImageDigests(chartDir string, digests map[string]string) error {
	path := filepath.Join(chartDir, "values.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	binaries := make([]string, 0, len(digests))
	for b := range digests {
		binaries = append(binaries, b)
	}
	sort.Strings(binaries)
	for _, b := range binaries {
		if data, err = setImageDigest(data, ImageRepositoryPrefix+b, digests[b]); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return os.WriteFile(path, data, 0o644)
}

var digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

func setImageDigest(data []byte, repository, digest string) ([]byte, error) {
	if !digestRE.MatchString(digest) {
		return nil, fmt.Errorf("image %s: %q is not a sha256 digest", repository, digest)
	}
	repoRE := regexp.MustCompile(`^( +)repository: *"?` + regexp.QuoteMeta(repository) + `"? *$`)
	lines := strings.SplitAfter(string(data), "\n")
	at := -1
	for i, l := range lines {
		if repoRE.MatchString(strings.TrimRight(l, "\r\n")) {
			if at >= 0 {
				return nil, fmt.Errorf("image %s: more than one `repository: %s` line", repository, repository)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("image %s: no `repository: %s` line", repository, repository)
	}
	indent := repoRE.FindStringSubmatch(strings.TrimRight(lines[at], "\r\n"))[1]
	line := indent + `digest: "` + digest + `"` + "\n"
	// The block's other keys: lines indented as repository is, up to the
	// first line indented less (comments and blank lines do not end it).
	for i := at + 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		trimmed := strings.TrimLeft(l, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if len(l)-len(trimmed) < len(indent) {
			break
		}
		if len(l)-len(trimmed) == len(indent) && strings.HasPrefix(trimmed, "digest:") {
			lines[i] = line
			return []byte(strings.Join(lines, "")), nil
		}
	}
	lines = append(lines[:at+1], append([]string{line}, lines[at+1:]...)...)
	return []byte(strings.Join(lines, "")), nil
}

// ArchiveImageDigests reads a packaged chart's values.yaml and returns the
// digest each holdfast image's block sets, by binary ("" for none).
func ArchiveImageDigests(archive string) (map[string]string, error) {
	values, err := archiveValues(archive)
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal(values, &v); err != nil {
		return nil, fmt.Errorf("%s: values.yaml: %w", archive, err)
	}
	out := map[string]string{}
	var walk func(any) error
	walk = func(n any) error {
		switch n := n.(type) {
		case map[string]any:
			if repo, ok := n["repository"].(string); ok && strings.HasPrefix(repo, ImageRepositoryPrefix) {
				b := strings.TrimPrefix(repo, ImageRepositoryPrefix)
				d, _ := n["digest"].(string)
				if prev, seen := out[b]; seen && prev != d {
					return fmt.Errorf("%s: values.yaml names image %s twice, with digests %q and %q", archive, repo, prev, d)
				}
				out[b] = d
			}
			for _, c := range n {
				if err := walk(c); err != nil {
					return err
				}
			}
		case []any:
			for _, c := range n {
				if err := walk(c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(v)
}

// archiveValues is the chart's own values.yaml (<name>/values.yaml, not a
// subchart's) from a helm archive.
func archiveValues(archive string) ([]byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s holds no values.yaml", archive)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
		if parts := strings.Split(h.Name, "/"); len(parts) == 2 && parts[1] == "values.yaml" {
			return io.ReadAll(tr)
		}
	}
}

// VerifyDigests checks that every chart Build wrote to out for the default
// pins of f sets, for each image of its upstream, the index digest of the
// image in the OCI layouts under images: a release must not ship a chart
// that pulls by tag, or by the digest of an earlier build.
func VerifyDigests(f *pins.File, out, images string) error {
	pkgs, err := Expected(f, out)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		up, err := f.Upstream(p.Chart.Upstream)
		if err != nil {
			return err
		}
		built, err := imagebuild.ReadAllDigests(images, up, p.Pin)
		if err != nil {
			return fmt.Errorf("chart %s %s: %w", p.Chart.Name, p.Version, err)
		}
		set, err := ArchiveImageDigests(p.Path)
		if err != nil {
			return fmt.Errorf("chart %s %s: %w (run `make charts`)", p.Chart.Name, p.Version, err)
		}
		for _, d := range built {
			got, ok := set[d.Binary]
			switch {
			case !ok:
				return fmt.Errorf("chart %s %s has no image %s%s", p.Chart.Name, p.Version, ImageRepositoryPrefix, d.Binary)
			case got == "":
				return fmt.Errorf("chart %s %s pulls image %s by tag, not by the built digest %s: run `make charts` after `make images`", p.Chart.Name, p.Version, d.Binary, d.Index)
			case got != d.Index.String():
				return fmt.Errorf("chart %s %s pins image %s to %s, not the built %s: run `make charts` after `make images`", p.Chart.Name, p.Version, d.Binary, got, d.Index)
			}
			delete(set, d.Binary)
		}
		for b := range set {
			return fmt.Errorf("chart %s %s names image %s%s, which %s %s does not build", p.Chart.Name, p.Version, ImageRepositoryPrefix, b, up.Name, p.Pin.Version)
		}
	}
	return nil
}
