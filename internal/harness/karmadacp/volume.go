package karmadacp

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SecretVolume is a folder laid out as the kubelet lays out a Secret
// volume: each key is a symlink <key> -> ..data/<key>, ..data a symlink
// to a timestamped folder holding the files. Publish replaces the content
// as the kubelet's atomic writer does: a new timestamped folder, a new
// ..data symlink renamed over the old one, then the old folder removed,
// so a reader sees the old files or the new ones, never a mix, and one
// holding the old folder's path cannot keep reading it.
type SecretVolume struct {
	dir string
	gen int
}

// NewSecretVolume lays out dir (created if missing) with files, one
// symlink per key.
func NewSecretVolume(dir string, files map[string][]byte) (*SecretVolume, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret volume %s: %w", dir, err)
	}
	v := &SecretVolume{dir: dir}
	if err := v.Publish(files); err != nil {
		return nil, err
	}
	for key := range files {
		if err := os.Symlink(filepath.Join("..data", key), v.File(key)); err != nil {
			return nil, fmt.Errorf("secret volume %s: %w", dir, err)
		}
	}
	return v, nil
}

// File is the path a container would be given for key.
func (v *SecretVolume) File(key string) string { return filepath.Join(v.dir, key) }

// Publish makes files the volume's content (the same keys as at
// NewSecretVolume; the kubelet's symlinks name only those).
func (v *SecretVolume) Publish(files map[string][]byte) error {
	v.gen++
	data := fmt.Sprintf("..%s_%02d", time.Now().UTC().Format("2006_01_02_15_04_05"), v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, data), 0o700); err != nil {
		return fmt.Errorf("secret volume %s: %w", v.dir, err)
	}
	for key, content := range files {
		if err := os.WriteFile(filepath.Join(v.dir, data, key), content, 0o600); err != nil {
			return fmt.Errorf("secret volume %s: %w", v.dir, err)
		}
	}
	link := filepath.Join(v.dir, "..data")
	old, _ := os.Readlink(link) // none before the first Publish
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(data, tmp); err != nil {
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
