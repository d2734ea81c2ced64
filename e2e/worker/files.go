package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// copyLogs copies every *.log under src to dst, keeping relative paths.
// Certificates, keys, tokens and etcd data stay behind.
func copyLogs(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log") {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// writeFileAtomic replaces path's content in one rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// caVolume is a folder laid out as a kubelet Secret volume holding a hub's
// CA: File is a symlink through ..data, and Publish swaps ..data to a new
// folder in one rename, as the kubelet does when the Secret changes. The
// worker reads File; what it sees of a change is exactly what it would see
// in a pod.
type caVolume struct {
	dir string
	gen int
}

// caVolumeKey is the Secret key the volume projects (ca.crt, as in a
// ServiceAccount token Secret).
const caVolumeKey = "ca.crt"

// newCAVolume lays out dir (created if missing) holding ca.
func newCAVolume(dir string, ca []byte) (*caVolume, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	v := &caVolume{dir: dir}
	if err := v.Publish(ca); err != nil {
		return nil, err
	}
	if err := os.Symlink(filepath.Join("..data", caVolumeKey), v.File()); err != nil {
		return nil, fmt.Errorf("CA volume %s: %w", dir, err)
	}
	return v, nil
}

// File is the path the worker is given (HUB_CA_FILE).
func (v *caVolume) File() string { return filepath.Join(v.dir, caVolumeKey) }

// Publish makes ca the volume's content: a new timestamped folder, a new
// ..data symlink beside the old one, renamed over it. The old folder is
// removed afterwards, as the kubelet does, so a reader holding its path
// cannot keep reading the old CA.
func (v *caVolume) Publish(ca []byte) error {
	v.gen++
	data := fmt.Sprintf("..%s_%02d", time.Now().UTC().Format("2006_01_02_15_04_05"), v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, data), 0o755); err != nil {
		return fmt.Errorf("CA volume %s: %w", v.dir, err)
	}
	if err := os.WriteFile(filepath.Join(v.dir, data, caVolumeKey), ca, 0o644); err != nil {
		return fmt.Errorf("CA volume %s: %w", v.dir, err)
	}
	link := filepath.Join(v.dir, "..data")
	old, _ := os.Readlink(link) // none before the first Publish
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(data, tmp); err != nil {
		return fmt.Errorf("CA volume %s: %w", v.dir, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		return fmt.Errorf("CA volume %s: %w", v.dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			return fmt.Errorf("CA volume %s: %w", v.dir, err)
		}
	}
	return nil
}
