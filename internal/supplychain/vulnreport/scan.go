package vulnreport

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

// Binary is a binary to scan.
type Binary struct {
	// Path is the binary's file. Its base name names the report's files, so
	// the binaries of one report must have different names.
	Path string
	// MainVersion is the version of the binary's main module it was built
	// from, the pinned upstream tag ("v1.18.2"). A binary built in a
	// checked-out tree says "(devel)" for its main module, and govulncheck
	// does not match "(devel)" against any advisory (x/vuln
	// internal/vulncheck.affected), so the main module's own advisories are
	// looked up at this version instead. Empty: they are not looked up, and
	// the report says so.
	MainVersion string
}

// BinaryReport is what the scan found in one binary.
type BinaryReport struct {
	// Name is the binary's file name.
	Name string `json:"name"`
	// MainModule and MainVersion are the binary's main module as its build
	// information records it; CheckedMainVersion is the version its
	// advisories were looked up at, empty if they were not.
	MainModule         string `json:"main_module"`
	MainVersion        string `json:"main_version"`
	CheckedMainVersion string `json:"checked_main_version,omitempty"`
	// GoVersion is the Go release the binary was built with, which is the
	// standard library it carries ("go1.26.8").
	GoVersion string `json:"go_version"`
	// Level is the precision govulncheck reached: "symbol" with a symbol
	// table, "module" without one.
	Level    string    `json:"level"`
	Findings []Finding `json:"findings"`

	// stream and mainStream are govulncheck's JSON streams in canonical
	// order: binary mode, and query mode for the main module (nil when not
	// run).
	stream, mainStream []byte
}

// Scanner runs govulncheck against a database.
type Scanner struct {
	// Govulncheck is the govulncheck binary.
	Govulncheck string
	DB          Database
}

// Scan builds (once) govulncheck and the database of the pinned snapshot
// under root/.cache, then scans bins.
func Scan(ctx context.Context, root string, bins []Binary) (*Report, error) {
	// Bad input is refused before minutes of tool building.
	if err := checkBinaries(bins); err != nil {
		return nil, err
	}
	gvc, err := toolcache.Ensure(ctx, root, toolcache.Govulncheck)
	if err != nil {
		return nil, err
	}
	db, err := DB(ctx, root)
	if err != nil {
		return nil, err
	}
	return Scanner{Govulncheck: gvc, DB: db}.Scan(ctx, bins)
}

// Scan scans each binary in turn. It fails on the first binary that cannot
// be scanned, naming it: a report that left a binary out would read as
// "nothing found" for it.
func (s Scanner) Scan(ctx context.Context, bins []Binary) (*Report, error) {
	if err := checkBinaries(bins); err != nil {
		return nil, err
	}
	r := &Report{DB: s.DB}
	for _, b := range bins {
		br, scanner, err := s.scan(ctx, b)
		if err != nil {
			return nil, err
		}
		if r.Scanner == "" {
			r.Scanner = scanner
		}
		r.Binaries = append(r.Binaries, br)
	}
	return r, nil
}

// checkBinaries refuses an empty list, a file that is missing or not a Go
// binary, and two binaries of the same name.
func checkBinaries(bins []Binary) error {
	if len(bins) == 0 {
		return errors.New("no binaries to scan")
	}
	seen := map[string]string{}
	for _, b := range bins {
		if _, err := buildinfo.ReadFile(b.Path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("binary %s: no such file", b.Path)
			}
			return fmt.Errorf("binary %s: not a Go binary with build information (%v)", b.Path, err)
		}
		name := filepath.Base(b.Path)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("binaries %s and %s have the same name, and a report names its files after the binary: scan them into separate reports", other, b.Path)
		}
		seen[name] = b.Path
	}
	return nil
}

func (s Scanner) scan(ctx context.Context, b Binary) (BinaryReport, string, error) {
	bi, err := buildinfo.ReadFile(b.Path)
	if err != nil {
		return BinaryReport{}, "", fmt.Errorf("binary %s: not a Go binary with build information (%v)", b.Path, err)
	}
	symbols, err := hasSymbolTable(b.Path)
	if err != nil {
		return BinaryReport{}, "", fmt.Errorf("binary %s: %w", b.Path, err)
	}
	st, raw, err := s.run(ctx, b.Path, "-mode=binary", b.Path)
	if err != nil {
		return BinaryReport{}, "", err
	}
	if st.config.ScanMode != "binary" {
		return BinaryReport{}, "", fmt.Errorf("govulncheck on %s: scan mode %q, want binary", b.Path, st.config.ScanMode)
	}
	br := BinaryReport{
		Name:        filepath.Base(b.Path),
		MainModule:  bi.Main.Path,
		MainVersion: bi.Main.Version,
		GoVersion:   bi.GoVersion,
		Level:       "module",
		Findings:    classify(st, symbols),
		stream:      raw,
	}
	if symbols {
		br.Level = "symbol"
	}
	if devel := bi.Main.Version == "" || bi.Main.Version == "(devel)"; devel && b.MainVersion != "" && bi.Main.Path != "" {
		query := bi.Main.Path + "@" + b.MainVersion
		qs, qraw, err := s.run(ctx, b.Path, "-mode=query", query)
		if err != nil {
			return BinaryReport{}, "", fmt.Errorf("looking up the advisories of %s's main module: %w", b.Path, err)
		}
		note := fmt.Sprintf("the binary's own main module, matched by the version it was built from (%s): its build information says %q, which govulncheck's binary mode does not match", b.MainVersion, bi.Main.Version)
		br.Findings = append(br.Findings, queryFindings(qs, bi.Main.Path, b.MainVersion, note)...)
		sortFindings(br.Findings)
		br.CheckedMainVersion = b.MainVersion
		br.mainStream = qraw
	} else if !devel {
		// govulncheck matched the main module at its recorded version.
		br.CheckedMainVersion = bi.Main.Version
	}
	return br, st.config.ScannerName + " " + st.config.ScannerVersion, nil
}

// run runs govulncheck with -db and -format json and the given arguments on
// behalf of binary, and returns its decoded stream and canonical bytes.
func (s Scanner) run(ctx context.Context, binary string, args ...string) (*stream, []byte, error) {
	args = append([]string{"-db", s.DB.URL(), "-format", "json"}, args...)
	cmd := exec.CommandContext(ctx, s.Govulncheck, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// In JSON mode govulncheck exits 0 whatever it finds: a failure is
		// a scan that did not happen.
		return nil, nil, fmt.Errorf("govulncheck %s on %s: %v: %s", strings.Join(args, " "), binary, err, strings.TrimSpace(stderr.String()))
	}
	st, err := decodeStream(&stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("govulncheck on %s: %w", binary, err)
	}
	if err := st.normalise(); err != nil {
		return nil, nil, fmt.Errorf("govulncheck on %s: %w", binary, err)
	}
	raw, err := st.canonical(s.DB.String())
	if err != nil {
		return nil, nil, fmt.Errorf("govulncheck on %s: %w", binary, err)
	}
	return st, raw, nil
}

// hasSymbolTable reports whether the executable at path has a symbol
// table, which govulncheck's binary mode needs to tell which vulnerable
// functions are in it (x/vuln internal/buildinfo, ExtractPackagesAndSymbols:
// no symbols, no symbol-level answer). A format it does not know counts as
// none, so the report errs on the side of "unknown", never of "not
// reachable".
func hasSymbolTable(path string) (bool, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		syms, err := f.Symbols()
		if errors.Is(err, elf.ErrNoSymbols) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading its ELF symbol table: %w", err)
		}
		return len(syms) > 0, nil
	}
	if f, err := macho.Open(path); err == nil {
		defer f.Close()
		return f.Symtab != nil && len(f.Symtab.Syms) > 0, nil
	}
	if f, err := pe.Open(path); err == nil {
		defer f.Close()
		return len(f.Symbols) > 0, nil
	}
	return false, nil
}
