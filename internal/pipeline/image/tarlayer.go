package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// file is one entry of a layer. Owners are numeric (no user or group
// names: they would come from the build host), and every entry gets the
// layer's fixed time.
type file struct {
	// Name is slash-separated and relative to /, e.g. "etc/passwd".
	Name string
	Dir  bool
	Mode int64 // permission bits, with setuid/setgid/sticky
	UID  int
	GID  int
	// Data is a small file's content; Source names a file on disk to
	// stream instead (a binary), read when the layer is written.
	Data   []byte
	Source string
	// Symlink, when set, makes the entry a symbolic link to it.
	Symlink string
}

// layerCompression is gzip's default level: a pull is paid by every node
// and layers are built once, so size matters more than the seconds the
// fastest level would save; gzip rather than zstd because `docker load`
// and every runtime read it.
const layerCompression = gzip.DefaultCompression

// newLayer writes files as a gzipped tar, sorted by name with any missing
// parent folders added (root-owned, 0755), all at time mtime. The same
// files give the same bytes, hence the same digest.
func newLayer(files []file, mtime time.Time) (v1.Layer, error) {
	files, err := withParents(files)
	if err != nil {
		return nil, err
	}
	var compressed bytes.Buffer
	zw, err := gzip.NewWriterLevel(&compressed, layerCompression)
	if err != nil {
		return nil, err
	}
	// The digests of both forms are taken as the layer is written, sparing
	// a second pass over a 100 MB binary.
	diffID := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diffID))
	for _, f := range files {
		if err := writeEntry(tw, f, mtime); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := compressed.Bytes()
	digest := sha256.Sum256(data)
	return &gzipLayer{
		data:   data,
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(digest[:])},
		diffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diffID.Sum(nil))},
	}, nil
}

// gzipLayer is a v1.Layer held compressed in memory, its digests known.
type gzipLayer struct {
	data           []byte
	digest, diffID v1.Hash
}

func (l *gzipLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *gzipLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *gzipLayer) Size() (int64, error)     { return int64(len(l.data)), nil }

func (l *gzipLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

func (l *gzipLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.data)), nil
}

func (l *gzipLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.data))
}

func writeEntry(tw *tar.Writer, f file, mtime time.Time) error {
	hdr := &tar.Header{
		Name:    f.Name,
		Mode:    f.Mode,
		Uid:     f.UID,
		Gid:     f.GID,
		ModTime: mtime,
	}
	if f.Dir {
		hdr.Typeflag, hdr.Name = tar.TypeDir, f.Name+"/"
		return tw.WriteHeader(hdr)
	}
	if f.Symlink != "" {
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, f.Symlink, 0o777
		return tw.WriteHeader(hdr)
	}
	hdr.Typeflag = tar.TypeReg
	if f.Source == "" {
		hdr.Size = int64(len(f.Data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(f.Data)
		return err
	}
	src, err := os.Open(f.Source)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	hdr.Size = info.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// A file that changes while it is read would give a tar that lies
	// about its size; tar.Writer refuses that, so the error says so.
	_, err = io.Copy(tw, src)
	return err
}

// withParents checks names, adds missing parent folders and sorts: a
// runtime extracts entries in order, so a folder must come before what it
// holds, and sorting by name does that since a parent is a prefix.
func withParents(files []file) ([]file, error) {
	byName := map[string]bool{}
	var out []file
	for _, f := range files {
		if f.Name == "" || f.Name != path.Clean(f.Name) || strings.HasPrefix(f.Name, "/") || f.Name == ".." || strings.HasPrefix(f.Name, "../") {
			return nil, fmt.Errorf("layer entry %q: want a clean path relative to /", f.Name)
		}
		if byName[f.Name] {
			return nil, fmt.Errorf("layer entry %q is listed twice", f.Name)
		}
		byName[f.Name] = true
		out = append(out, f)
	}
	for _, f := range files {
		for dir := path.Dir(f.Name); dir != "."; dir = path.Dir(dir) {
			if !byName[dir] {
				byName[dir] = true
				out = append(out, file{Name: dir, Dir: true, Mode: 0o755})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
