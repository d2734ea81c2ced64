package standin

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// BusyboxEnv names a static amd64 busybox to use instead of Debian's
// busybox-static package (a machine without apt).
const BusyboxEnv = "HOLDFAST_BUSYBOX"

// busyboxPackage is Debian's statically linked busybox: one file, no
// libraries, every applet the chart's scripts run (ash with [[ ]], sed -i,
// base64, cp -L).
const busyboxPackage = "busybox-static"

// busybox returns a static amd64 busybox and where it came from: BusyboxEnv,
// or the apt candidate of busybox-static, fetched once with `apt-get
// download` (no root, nothing installed) and unpacked with dpkg-deb into
// .cache/standin/<package>_<version>/.
func busybox(ctx context.Context, o Options) (path, from string, err error) {
	if p := os.Getenv(BusyboxEnv); p != "" {
		return p, p, checkStaticAMD64(p)
	}
	version, err := aptCandidate(ctx, busyboxPackage)
	if err != nil {
		return "", "", err
	}
	from = busyboxPackage + "_" + version
	dir := filepath.Join(o.Root, CacheDir, strings.ReplaceAll(from, ":", "%3a"))
	path = filepath.Join(dir, "bin", "busybox")
	if checkStaticAMD64(path) == nil {
		return path, from, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	unlock, err := toolcache.Lock(ctx, dir+".lock")
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if checkStaticAMD64(path) == nil {
		return path, from, nil
	}
	work, err := os.MkdirTemp(filepath.Dir(dir), ".busybox-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(work)
	if err := run(ctx, work, "apt-get", "download", busyboxPackage+"="+version); err != nil {
		return "", "", fmt.Errorf("%w (or set %s to a static amd64 busybox)", err, BusyboxEnv)
	}
	debs, _ := filepath.Glob(filepath.Join(work, "*.deb"))
	if len(debs) != 1 {
		return "", "", fmt.Errorf("apt-get download %s=%s left %d .deb files in %s", busyboxPackage, version, len(debs), work)
	}
	unpacked := filepath.Join(work, "root")
	if err := run(ctx, work, "dpkg-deb", "-x", debs[0], unpacked); err != nil {
		return "", "", err
	}
	got := filepath.Join(unpacked, "bin", "busybox")
	if err := checkStaticAMD64(got); err != nil {
		return "", "", fmt.Errorf("%s from %s: %w", got, filepath.Base(debs[0]), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.Rename(filepath.Join(unpacked, "bin"), filepath.Join(dir, "bin")); err != nil {
		return "", "", err
	}
	return path, from, nil
}

// aptCandidate is the version apt would install of pkg, from the local
// package lists (no network).
func aptCandidate(ctx context.Context, pkg string) (string, error) {
	cmd := exec.CommandContext(ctx, "apt-cache", "policy", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %w: %s (or set %s to a static amd64 busybox)", pkg, err, strings.TrimSpace(stderr.String()), BusyboxEnv)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			v = strings.TrimSpace(v)
			if v == "" || v == "(none)" {
				break
			}
			return v, nil
		}
	}
	return "", fmt.Errorf("apt has no candidate for %s (apt-get update, or set %s to a static amd64 busybox)", pkg, BusyboxEnv)
}

// checkStaticAMD64 fails unless path is an x86-64 ELF executable with no
// program interpreter (a static binary: the images have no libc).
func checkStaticAMD64(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s is for %s, not x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
