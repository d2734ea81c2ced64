package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tinyELF is the smallest ELF64 executable debug/elf reads: a header and
// one program header, PT_LOAD, or PT_INTERP when dynamic.
func tinyELF(t *testing.T, machine elf.Machine, dynamic bool) []byte {
	t.Helper()
	var b bytes.Buffer
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	b.Write(make([]byte, 16-7))
	w(uint16(elf.ET_EXEC))
	w(uint16(machine))
	w(uint32(elf.EV_CURRENT))
	w(uint64(0x400000)) // entry
	w(uint64(64))       // phoff
	w(uint64(0))        // shoff
	w(uint32(0))        // flags
	w(uint16(64))       // ehsize
	w(uint16(56))       // phentsize
	w(uint16(1))        // phnum
	w(uint16(64))       // shentsize
	w(uint16(0))        // shnum
	w(uint16(0))        // shstrndx
	typ := elf.PT_LOAD
	if dynamic {
		typ = elf.PT_INTERP
	}
	w(uint32(typ))
	w(uint32(elf.PF_R | elf.PF_X))
	for range 6 { // offset, vaddr, paddr, filesz, memsz, align
		w(uint64(0))
	}
	return b.Bytes()
}

type tarFile struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
	pax      map[string]string
}

func imageWith(t *testing.T, arch string, files ...tarFile) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, Size: int64(len(f.data)), Typeflag: tar.TypeReg, PAXRecords: f.pax}
		if f.pax != nil {
			h.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	// The config first: AppendLayers then records the layer in it.
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: arch})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		t.Fatal(err)
	}
	return img
}

func TestCheckRunnable(t *testing.T) {
	arm := tinyELF(t, elf.EM_AARCH64, false)
	cases := []struct {
		name, arch, path, user string
		file                   tarFile
		wantErr                string // "" when runnable
	}{
		{name: "arm64 static binary as root", arch: "arm64", path: "/bin/karmada-controller-manager",
			file: tarFile{name: "bin/karmada-controller-manager", mode: 0o755, data: arm}},
		{name: "nonroot user, world-executable", arch: "arm64", path: "/manager", user: "65532:65532",
			file: tarFile{name: "manager", mode: 0o755, data: arm}},
		{name: "nonroot user, owner's file", arch: "arm64", path: "/manager", user: "65532:65532",
			file: tarFile{name: "manager", mode: 0o700, uid: 65532, gid: 65532, data: arm}},
		{name: "binary of the other platform", arch: "arm64", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o755, data: tinyELF(t, elf.EM_X86_64, false)},
			wantErr: "built for EM_X86_64, the image says arm64"},
		{name: "dynamically linked", arch: "amd64", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o755, data: tinyELF(t, elf.EM_X86_64, true)},
			wantErr: "dynamically linked"},
		{name: "root-only file for the nonroot user", arch: "arm64", path: "/manager", user: "65532:65532",
			file:    tarFile{name: "manager", mode: 0o700, data: arm},
			wantErr: `is not executable by user "65532:65532"`},
		{name: "no execute bit at all", arch: "arm64", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o644, data: arm},
			wantErr: "is not executable"},
		{name: "file capability", arch: "arm64", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o755, data: arm, pax: map[string]string{"SCHILY.xattr.security.capability": "\x01\x00\x00\x02"}},
			wantErr: "file capability"},
		{name: "a script, not a binary", arch: "arm64", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o755, data: []byte("#!/bin/sh\nexec true\n")},
			wantErr: "not an ELF file"},
		{name: "binary elsewhere", arch: "arm64", path: "/manager",
			file:    tarFile{name: "bin/manager", mode: 0o755, data: arm},
			wantErr: "/manager is not in the image"},
		{name: "named user", arch: "arm64", path: "/manager", user: "nonroot",
			file:    tarFile{name: "manager", mode: 0o755, data: arm},
			wantErr: "not numeric"},
		{name: "platform holdfast does not build", arch: "s390x", path: "/manager",
			file:    tarFile{name: "manager", mode: 0o755, data: arm},
			wantErr: `architecture "s390x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRunnable(imageWith(t, c.arch, c.file), c.path, c.user)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("CheckRunnable: %v, want runnable", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("CheckRunnable: %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}
