package estimator

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// secretVolume is a folder laid out as a kubelet Secret volume holding one
// key: File is a symlink through ..data, and Publish swaps ..data to a new
// folder in one rename, as the kubelet does when the Secret changes. The
// estimator reads File; what it sees of a change is exactly what it would
// see in a pod (holdfast's chart mounts its kubeconfig Secret as a folder,
// patch 0007).
type secretVolume struct {
	dir, key string
	gen      int
}

// newSecretVolume lays out dir (created if missing) with key holding data.
func newSecretVolume(dir, key string, data []byte) (*secretVolume, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	v := &secretVolume{dir: dir, key: key}
	if err := v.Publish(data); err != nil {
		return nil, err
	}
	if err := os.Symlink(filepath.Join("..data", key), v.File()); err != nil {
		return nil, fmt.Errorf("secret volume %s: %w", dir, err)
	}
	return v, nil
}

// File is the path the estimator is given (--kubeconfig).
func (v *secretVolume) File() string { return filepath.Join(v.dir, v.key) }

// Publish makes data the volume's content: a new timestamped folder, a new
// ..data symlink beside the old one, renamed over it. The old folder is
// removed afterwards, as the kubelet does, so a reader holding its path
// cannot keep reading the old content.
func (v *secretVolume) Publish(data []byte) error {
	v.gen++
	folder := fmt.Sprintf("..%s_%02d", time.Now().UTC().Format("2006_01_02_15_04_05"), v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, folder), 0o755); err != nil {
		return fmt.Errorf("secret volume %s: %w", v.dir, err)
	}
	if err := os.WriteFile(filepath.Join(v.dir, folder, v.key), data, 0o600); err != nil {
		return fmt.Errorf("secret volume %s: %w", v.dir, err)
	}
	link := filepath.Join(v.dir, "..data")
	old, _ := os.Readlink(link) // none before the first Publish
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(folder, tmp); err != nil {
		return fmt.Errorf("secret volume %s: %w", v.dir, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		return fmt.Errorf("secret volume %s: %w", v.dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			return fmt.Errorf("secret volume %s: %w", v.dir, err)
		}
	}
	return nil
}
