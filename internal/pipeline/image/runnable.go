package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// maxBinary bounds how much of an image's binary CheckRunnable reads: the
// shipped binaries are under 200 MB; a bigger entry is not one of ours.
const maxBinary = 512 << 20

// elfMachines are the ELF machines of the platforms holdfast builds, by
// GOARCH.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// CheckRunnable inspects, without running it, whether img can start its
// binary at binPath on a node of its own platform as user (the image's
// config User, "" for root): the file is in the image's flattened root
// filesystem, a regular file the user may execute, a static ELF
// executable for the config's architecture (no interpreter: the
// distroless and alpine bases have no matching libc for a Go binary that
// wants one), and it carries no file capability, which the kernel refuses
// to exec under allowPrivilegeEscalation: false (no_new_privs).
//
// It is how a platform the machine cannot run (arm64 here) is checked;
// the host platform's image is also run (cmd/holdfast, e2e/node).
func CheckRunnable(img v1.Image, binPath, user string) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading the image config: %w", err)
	}
	want, ok := elfMachines[cfg.Architecture]
	if !ok {
		return fmt.Errorf("image architecture %q is not one holdfast builds", cfg.Architecture)
	}
	uid, gid, err := parseUser(user)
	if err != nil {
		return err
	}
	hdr, data, err := findFile(img, binPath)
	if err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeReg {
		return fmt.Errorf("%s is not a regular file (tar type %q)", binPath, hdr.Typeflag)
	}
	if !mayExecute(hdr, uid, gid) {
		return fmt.Errorf("%s (mode %o, owner %d:%d) is not executable by user %q", binPath, hdr.Mode&0o7777, hdr.Uid, hdr.Gid, user)
	}
	for k := range hdr.PAXRecords {
		if strings.EqualFold(k, "SCHILY.xattr.security.capability") {
			return fmt.Errorf("%s carries a file capability: exec fails under allowPrivilegeEscalation: false", binPath)
		}
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s is not an ELF file: %w", binPath, err)
	}
	defer f.Close()
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, the image says %s (%s)", binPath, f.Machine, cfg.Architecture, want)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s is an ELF %s, not an executable", binPath, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it asks for an interpreter): the image has no libc for it", binPath)
		}
	}
	return nil
}

// parseUser reads an image config User of the numeric forms holdfast's
// images use: "", "uid" or "uid:gid".
func parseUser(user string) (uid, gid int, err error) {
	if user == "" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	if uid, err = strconv.Atoi(u); err != nil {
		return 0, 0, fmt.Errorf("image user %q is not numeric: a name needs the image's /etc/passwd, which holdfast's images are not built to need", user)
	}
	gid = uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			return 0, 0, fmt.Errorf("image group in user %q is not numeric", user)
		}
	}
	return uid, gid, nil
}

// mayExecute is the kernel's permission check for exec by a process of
// uid:gid (root needs any one execute bit).
func mayExecute(h *tar.Header, uid, gid int) bool {
	mode := h.Mode
	switch {
	case uid == 0:
		return mode&0o111 != 0
	case h.Uid == uid:
		return mode&0o100 != 0
	case h.Gid == gid:
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}

// findFile returns the header and content of name in img's flattened
// filesystem, following no links: the binaries are regular files.
func findFile(img v1.Image, name string) (*tar.Header, []byte, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	want := strings.TrimPrefix(path.Clean("/"+name), "/")
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s is not in the image", name)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading the image's filesystem: %w", err)
		}
		if strings.TrimPrefix(path.Clean("/"+h.Name), "/") != want {
			continue
		}
		if h.Size > maxBinary {
			return nil, nil, fmt.Errorf("%s is %d bytes, more than the %d a binary of ours may be", name, h.Size, maxBinary)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxBinary))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s from the image: %w", name, err)
		}
		return h, data, nil
	}
}
