package repofiles

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// MaxSize is the largest file the repository tracks without a Fixtures entry.
// The largest source or doc file here is tens of KiB; 1 MiB is far above any
// hand-written file and far below any binary worth shipping by mistake.
const MaxSize = 1 << 20

// Fixtures names the tracked files allowed to break the rules, each with the
// reason it must be committed. Keep it short: a fixture that can be generated
// by its test should be.
var Fixtures = map[string]string{}

// A Finding is one tracked file that breaks a rule.
type Finding struct {
	Path   string
	Reason string
}

func (f Finding) String() string { return f.Path + ": " + f.Reason }

// binaryMagic are the first bytes of the executable formats a Go build or a
// test build can leave behind (ELF, Mach-O, PE, WebAssembly).
var binaryMagic = []struct {
	magic []byte
	what  string
}{
	{[]byte("\x7fELF"), "an ELF executable"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "a Mach-O executable"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "a Mach-O executable"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O executable"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O executable"},
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a Mach-O universal executable"},
	{[]byte("MZ"), "a PE (Windows) executable"},
	{[]byte("\x00asm"), "a WebAssembly module"},
}

// Tracked lists the files git tracks under root, with their git modes.
func Tracked(root string) (map[string]string, error) {
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing tracked files in %s (git ls-files): %v: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	files := map[string]string{}
	for _, rec := range strings.Split(string(out), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		mode, _, _ := strings.Cut(meta, " ")
		files[path] = mode
	}
	return files, nil
}

// Check inspects every tracked file under root and returns the ones that
// break a rule, sorted by path. A file named in fixtures is exempt; a fixtures
// entry that names no tracked file is a finding too, so the list cannot rot.
func Check(root string, fixtures map[string]string) ([]Finding, error) {
	files, err := Tracked(root)
	if err != nil {
		return nil, err
	}
	var findings []Finding
	for path, mode := range files {
		if mode == "120000" || mode == "160000" { // symlink, submodule: no content here
			continue
		}
		if _, ok := fixtures[path]; ok {
			continue
		}
		reason, err := inspect(filepath.Join(root, path), mode)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			findings = append(findings, Finding{Path: path, Reason: reason})
		}
	}
	for path := range fixtures {
		if _, ok := files[path]; !ok {
			findings = append(findings, Finding{Path: path, Reason: "listed in Fixtures but not tracked: remove the entry"})
		}
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Path < findings[j].Path })
	return findings, nil
}

func inspect(path, mode string) (string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "", nil // deleted in the working tree; git status shows it
	}
	if err != nil {
		return "", fmt.Errorf("reading tracked file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading tracked file: %w", err)
	}
	if info.IsDir() {
		return "", nil
	}
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("reading tracked file %s: %w", path, err)
	}
	head = head[:n]
	for _, m := range binaryMagic {
		if bytes.HasPrefix(head, m.magic) {
			return m.what + ": build output belongs in _output/ (ignored), not in git", nil
		}
	}
	if info.Size() > MaxSize {
		return fmt.Sprintf("%d bytes, over the %d-byte limit: generate it, or list it in repofiles.Fixtures with the reason", info.Size(), MaxSize), nil
	}
	if mode == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
		return "executable bit set on a file that is not a script (no #! line)", nil
	}
	return "", nil
}
