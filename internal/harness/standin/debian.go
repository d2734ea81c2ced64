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

// debStatic is a statically linked program from a Debian package: one
// file, no libraries, so it runs in an image without libc.
type debStatic struct {
	// Package is the Debian package, File the program's path in it.
	Package, File string
	// Env names a static amd64 binary to use instead (a machine without
	// apt).
	Env string
}

var (
	// debBusybox gives the utilities the chart's scripts run (sed -i,
	// base64, cp -L, tr, sleep, mkdir) and /bin/sh, which only starts
	// bash in the hook scripts or runs the pre-upgrade job's plain
	// pipelines.
	debBusybox = debStatic{Package: "busybox-static", File: "bin/busybox", Env: "HOLDFAST_BUSYBOX"}
	// debBash is bash itself for `bash <<'EOF'`: busybox ash's [[ ]] is
	// test(1), so the wait script's unquoted `[[ $(kubectl ...) != v1.18.2 ]]`
	// fails with "unknown operand" while the ConfigMap is missing and the
	// loop ends at once; bash's [[ ]] does not split words.
	debBash = debStatic{Package: "bash-static", File: "bin/bash-static", Env: "HOLDFAST_BASH"}
)

// fetch returns the program and where it came from: d.Env, or the apt
// candidate of d.Package, fetched once with `apt-get download` (no root,
// nothing installed) and unpacked with dpkg-deb into
// .cache/standin/<package>_<version>/.
func (d debStatic) fetch(ctx context.Context, o Options) (path, from string, err error) {
	if p := os.Getenv(d.Env); p != "" {
		return p, p, checkStaticAMD64(p)
	}
	version, err := aptCandidate(ctx, d.Package, d.Env)
	if err != nil {
		return "", "", err
	}
	from = d.Package + "_" + version
	dir := filepath.Join(o.Root, CacheDir, strings.ReplaceAll(from, ":", "%3a"))
	path = filepath.Join(dir, filepath.FromSlash(d.File))
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
	work, err := os.MkdirTemp(filepath.Dir(dir), "."+d.Package+"-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(work)
	if err := run(ctx, work, "apt-get", "download", d.Package+"="+version); err != nil {
		return "", "", fmt.Errorf("%w (or set %s to a static amd64 binary)", err, d.Env)
	}
	debs, _ := filepath.Glob(filepath.Join(work, "*.deb"))
	if len(debs) != 1 {
		return "", "", fmt.Errorf("apt-get download %s=%s left %d .deb files in %s", d.Package, version, len(debs), work)
	}
	unpacked := filepath.Join(work, "root")
	if err := run(ctx, work, "dpkg-deb", "-x", debs[0], unpacked); err != nil {
		return "", "", err
	}
	if err := checkStaticAMD64(filepath.Join(unpacked, filepath.FromSlash(d.File))); err != nil {
		return "", "", fmt.Errorf("%s from %s: %w", d.File, filepath.Base(debs[0]), err)
	}
	// The unpacked package goes into place whole: a reader sees all of
	// it or nothing.
	if err := os.Rename(unpacked, dir); err != nil {
		return "", "", err
	}
	return path, from, nil
}

// aptCandidate is the version apt would install of pkg, from the local
// package lists (no network).
func aptCandidate(ctx context.Context, pkg, env string) (string, error) {
	cmd := exec.CommandContext(ctx, "apt-cache", "policy", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %w: %s (or set %s to a static amd64 binary)", pkg, err, strings.TrimSpace(stderr.String()), env)
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
	return "", fmt.Errorf("apt has no candidate for %s (apt-get update, or set %s to a static amd64 binary)", pkg, env)
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
