package standin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/holdfast-dist/holdfast/internal/pipeline"
	"github.com/holdfast-dist/holdfast/internal/pipeline/image"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// DefaultOut is where the layouts go under the repository root.
const DefaultOut = "_output/standin-images"

// NodeSuiteTrees is the trees folder, under the repository root, of the
// node suite's stand-in builds (e2e/node, and e2e/cmd/e2e-prepare ahead of
// it): a folder of its own because the pipeline rebuilds trees another
// holdfast executable made (Options.Trees), and one folder for both so
// that the layouts built ahead carry the stamps the suite computes.
const NodeSuiteTrees = "_output/node-suite-trees"

// Options say where things are.
type Options struct {
	// Root is the repository root (.cache, pins.txt).
	Root string
	// Out is the layouts' folder; empty means Root/DefaultOut.
	Out string
	// Trees makes the pristine trees; a zero Root means Root, a zero Out
	// Root/_output/trees. A test binary should give its own Out: the
	// pipeline rebuilds trees made by another holdfast executable.
	Trees pipeline.Config
	// Binaries overrides where a binary comes from, by name
	// (kube-controller-manager, kubectl, etcd, kube-apiserver, cfssl,
	// cfssljson, coredns, busybox, hooktools, worker-operator and the
	// Karmada binaries' names): e.g. the node harness's own Kubernetes
	// build. Anything not named is built or found as the package doc says.
	Binaries map[string]string
	// Log receives one line per step; nil discards.
	Log io.Writer
}

// Image is one stand-in image written.
type Image struct {
	Entry
	// Layout is the OCI image layout folder; its index.json names the
	// image (io.containerd.image.name, org.opencontainers.image.ref.name).
	Layout string
	// Digest is the image index's digest.
	Digest string
	// Built is false when the layout was already current.
	Built bool
}

// Build makes every image of the Catalogue (or finds it current) and
// returns them by Ref. A second call with the same inputs writes nothing.
func Build(ctx context.Context, o Options) (map[string]Image, error) {
	if o.Root == "" {
		return nil, errors.New("standin: Options.Root is required")
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, DefaultOut)
	}
	if o.Trees.Root == "" {
		o.Trees.Root = o.Root
	}
	if o.Trees.Out == "" {
		o.Trees.Out = filepath.Join(o.Root, pipeline.DefaultOut)
	}
	if o.Trees.Log == nil {
		o.Trees.Log = o.Log
	}
	in, err := gather(ctx, o)
	if err != nil {
		return nil, err
	}
	return write(ctx, o, in)
}

// write assembles the images of in that are not current in o.Out.
func write(ctx context.Context, o Options, in inputs) (map[string]Image, error) {
	ds, err := defs(in)
	if err != nil {
		return nil, err
	}
	ca, err := image.CABundle()
	if err != nil {
		return nil, err
	}
	zoneinfo, err := goZoneinfo(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	// Concurrent test binaries wait for one writer.
	unlock, err := toolcache.Lock(ctx, filepath.Join(o.Out, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("waiting for the lock of %s: %w", o.Out, err)
	}
	defer unlock()
	entries := map[string]Entry{}
	for _, e := range Catalogue {
		entries[e.Ref] = e
	}
	out := map[string]Image{}
	for _, d := range ds {
		d.in.CABundle, d.in.ZoneInfo, d.in.Created = ca, zoneinfo, created
		d.in.Annotations = annotations(entries[d.ref])
		img, err := writeOne(o, d)
		if err != nil {
			return nil, err
		}
		img.Entry = entries[d.ref]
		out[d.ref] = img
	}
	return out, nil
}

// created is every stand-in's fixed date: they are test support, made of
// inputs whose versions the key names, and their digests should not move
// with the clock or holdfast's commit.
var created = time.Unix(0, 0).UTC()

// Annotation keys of the stand-ins, beside the OCI ones.
const (
	AnnotationStandIn     = "io.github.holdfast-dist.standin"
	AnnotationStandInFrom = "io.github.holdfast-dist.standin.from"
)

func annotations(e Entry) map[string]string {
	return map[string]string{
		image.AnnotationTitle:    e.Ref,
		image.AnnotationBaseName: image.BaseName,
		AnnotationStandIn:        string(e.Kind),
		AnnotationStandInFrom:    e.From,
	}
}

// LayoutDir is where the layout of ref goes: Out/<registry>/<repository>/<tag>
// (docker.io/karmada/karmada-scheduler/v1.18.2).
func LayoutDir(out, ref string) (string, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("stand-in image name %q: %w", ref, err)
	}
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io" // as the charts and containerd write it
	}
	return filepath.Join(out, registry, filepath.FromSlash(tag.RepositoryStr()), tag.TagStr()), nil
}

// writeOne writes d's layout unless its stamp says it is current.
func writeOne(o Options, d def) (Image, error) {
	dir, err := LayoutDir(o.Out, d.ref)
	if err != nil {
		return Image{}, err
	}
	tag, _ := name.NewTag(d.ref, name.StrictValidation)
	key, err := inputKey(d)
	if err != nil {
		return Image{}, fmt.Errorf("stand-in %s: %w", d.ref, err)
	}
	stampPath := dir + ".stamp"
	if st, err := readStamp(stampPath); err == nil && st.Key == key {
		if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
			return Image{Layout: dir, Digest: st.Digest}, nil
		}
	}
	start := time.Now()
	img, err := image.BuildPlain(d.in)
	if err != nil {
		return Image{}, fmt.Errorf("stand-in %s: %w", d.ref, err)
	}
	// The stamp goes first: a layout without a current stamp is rebuilt.
	if err := os.Remove(stampPath); err != nil && !os.IsNotExist(err) {
		return Image{}, err
	}
	if err := img.WriteLayout(dir, tag); err != nil {
		return Image{}, fmt.Errorf("stand-in %s: %w", d.ref, err)
	}
	digest, err := img.Index.Digest()
	if err != nil {
		return Image{}, err
	}
	data, _ := json.Marshal(stamp{Key: key, Digest: digest.String()})
	if err := image.WriteFile(stampPath, data); err != nil {
		return Image{}, err
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "stand-in %s@%s in %s\n", d.ref, digest, time.Since(start).Round(time.Millisecond))
	}
	return Image{Layout: dir, Digest: digest.String(), Built: true}, nil
}

// stamp is what a layout was built from (its inputs' key) and its digest.
type stamp struct {
	Key    string `json:"key"`
	Digest string `json:"digest"`
}

func readStamp(path string) (stamp, error) {
	var st stamp
	data, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// keyFormat changes when the way an input becomes an image changes
// (internal/pipeline/image's root filesystem or layer writer): it invalidates
// every layout.
const keyFormat = "standin/1"

// inputKey hashes everything the image is made of: its definition, the
// content of every file it copies, the tree's provenance, the CA bundle
// and time zones. Content, not paths or times: a rebuilt tool with the same
// bytes keeps the layout, a changed one replaces it.
func inputKey(d def) (string, error) {
	h := sha256.New()
	put := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s\n", len(p), p)
		}
	}
	in := d.in
	put(keyFormat, d.ref, in.Name, in.Platform.String(), strings.Join(in.Entrypoint, "\x00"), strings.Join(in.Env, "\x00"), in.User, in.WorkingDir)
	put(hashBytes(in.CABundle), hashBytes(in.ZoneInfo), in.Created.String())
	for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
		put("annotation", k, in.Annotations[k])
	}
	if len(in.TreeFiles) > 0 {
		prov, err := os.ReadFile(filepath.Join(in.Tree, provenance.FileName))
		if err != nil {
			return "", fmt.Errorf("tree %s: %w", in.Tree, err)
		}
		put("tree", string(prov), strings.Join(in.TreeFiles, "\x00"))
	}
	for _, l := range in.Layers {
		put("layer", l.CreatedBy)
		for _, f := range l.Files {
			put(f.Name, fmt.Sprint(f.Mode, f.UID, f.GID, f.Dir), f.Symlink, hashBytes(f.Data))
			if f.Source != "" {
				sum, err := hashFile(f.Source)
				if err != nil {
					return "", err
				}
				put(sum)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
