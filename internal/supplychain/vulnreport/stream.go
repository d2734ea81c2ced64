package vulnreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// The types below decode govulncheck's JSON stream (`-format json`) only as
// far as the report needs. golang.org/x/vuln exports no types for it: they
// live in its internal/govulncheck, and its one exported package, scan, runs
// the command. The field names are those of the documented protocol, v1.0.0
// (https://pkg.go.dev/golang.org/x/vuln/cmd/govulncheck, "JSON output", and
// the doc of x/vuln's internal/govulncheck.Message).

// protocolMajor is the major version of the JSON protocol this reader
// knows; a stream of another major version is refused, not misread.
const protocolMajor = "v1."

// message is one value of the stream: exactly one field is set.
type message struct {
	Config   *streamConfig   `json:"config,omitempty"`
	Progress json.RawMessage `json:"progress,omitempty"`
	SBOM     *streamSBOM     `json:"SBOM,omitempty"`
	OSV      *osvEntry       `json:"osv,omitempty"`
	Finding  *streamFinding  `json:"finding,omitempty"`
}

type streamConfig struct {
	ProtocolVersion string `json:"protocol_version"`
	ScannerName     string `json:"scanner_name"`
	ScannerVersion  string `json:"scanner_version"`
	DB              string `json:"db"`
	ScanLevel       string `json:"scan_level"`
	ScanMode        string `json:"scan_mode"`
}

type streamSBOM struct {
	GoVersion string `json:"go_version"`
}

// osvEntry is the part of an OSV entry (https://ossf.github.io/osv-schema/)
// the report names: id, aliases (CVE, GHSA), summary, and per affected
// module its version ranges, for the fixed version of a query-mode match.
type osvEntry struct {
	ID       string   `json:"id"`
	Aliases  []string `json:"aliases"`
	Summary  string   `json:"summary"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Fixed string `json:"fixed"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

type streamFinding struct {
	OSV          string  `json:"osv,omitempty"`
	FixedVersion string  `json:"fixed_version,omitempty"`
	Trace        []frame `json:"trace,omitempty"`
}

// frame is one entry of a finding's trace. In binary mode the trace has one
// frame, the vulnerable module, package or symbol itself: govulncheck sees
// no call stacks in a binary.
//
// Its fields are in the protocol's order and omitted when empty, as
// govulncheck writes them, so that a finding re-encoded by normalise reads
// like the others. Binary mode sets no source position.
type frame struct {
	Module   string `json:"module,omitempty"`
	Version  string `json:"version,omitempty"`
	Package  string `json:"package,omitempty"`
	Function string `json:"function,omitempty"`
	Receiver string `json:"receiver,omitempty"`
}

// stream is a decoded govulncheck JSON stream: each message with its raw
// bytes, as govulncheck wrote them.
type stream struct {
	config   streamConfig
	raw      []json.RawMessage
	messages []message
}

// decodeStream reads a whole stream. It must start with a config message of
// a protocol this reader knows.
func decodeStream(r io.Reader) (*stream, error) {
	dec := json.NewDecoder(r)
	s := &stream{}
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading govulncheck's JSON stream at message %d: %w", len(s.raw)+1, err)
		}
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("reading govulncheck's JSON stream, message %d: %w", len(s.raw)+1, err)
		}
		if m.kind() < 0 {
			return nil, fmt.Errorf("reading govulncheck's JSON stream, message %d: none of config, progress, SBOM, osv, finding: %.200s", len(s.raw)+1, raw)
		}
		s.raw = append(s.raw, raw)
		s.messages = append(s.messages, m)
	}
	if len(s.messages) == 0 || s.messages[0].Config == nil {
		return nil, errors.New("govulncheck's JSON stream does not start with a config message")
	}
	s.config = *s.messages[0].Config
	if !strings.HasPrefix(s.config.ProtocolVersion, protocolMajor) {
		return nil, fmt.Errorf("govulncheck's JSON stream is of protocol %q; this reader knows %s*", s.config.ProtocolVersion, protocolMajor)
	}
	return s, nil
}

// kind orders the messages of a canonical stream: the config first, as the
// protocol requires, then progress, SBOM, OSV entries and findings.
func (m message) kind() int {
	switch {
	case m.Config != nil:
		return 0
	case m.Progress != nil:
		return 1
	case m.SBOM != nil:
		return 2
	case m.OSV != nil:
		return 3
	case m.Finding != nil:
		return 4
	}
	return -1
}

// normalise credits each package and symbol finding to the right module:
// the longest of the advisory's affected modules in the binary (those of
// its module-level findings) whose path holds the finding's package, with
// that module's version and fixed version. govulncheck v1.9.0 takes the
// first module in map order whose path is a prefix of the package
// (internal/vulncheck, PackageGraph.findModule: "TODO: not first match,
// best match"), so a package of a nested module (go.opentelemetry.io/otel/
// sdk/internal/x) is credited to its parent (go.opentelemetry.io/otel,
// without a fixed version) in some runs and not in others: the same binary
// would give different findings run to run. Module-level findings come from
// the build information and are right; the standard library is never
// misread (govulncheck tests for it first). A corrected finding is
// re-encoded the way govulncheck writes one; every other message keeps
// govulncheck's bytes.
func (s *stream) normalise() error {
	type modInfo struct{ version, fixed string }
	affected := map[string]map[string]modInfo{} // osv -> module -> info
	for _, m := range s.messages {
		if f := m.Finding; f != nil && len(f.Trace) > 0 && f.Trace[0].Package == "" {
			if affected[f.OSV] == nil {
				affected[f.OSV] = map[string]modInfo{}
			}
			affected[f.OSV][f.Trace[0].Module] = modInfo{f.Trace[0].Version, f.FixedVersion}
		}
	}
	for i, m := range s.messages {
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Package == "" || f.Trace[0].Module == stdlib {
			continue
		}
		best := ""
		for mod := range affected[f.OSV] {
			if (f.Trace[0].Package == mod || strings.HasPrefix(f.Trace[0].Package, mod+"/")) && len(mod) > len(best) {
				best = mod
			}
		}
		if best == "" || best == f.Trace[0].Module {
			continue
		}
		info := affected[f.OSV][best]
		fixed := *f
		fixed.Trace = slices.Clone(f.Trace)
		fixed.Trace[0].Module, fixed.Trace[0].Version = best, info.version
		fixed.FixedVersion = info.fixed
		raw, err := json.MarshalIndent(message{Finding: &fixed}, "", "  ")
		if err != nil {
			return err
		}
		s.messages[i].Finding, s.raw[i] = &fixed, raw
	}
	return nil
}

// canonical returns the stream with its messages in a fixed order and the
// config's db, the local folder the database was read from, replaced by
// dbName: the same binary and snapshot then give the same bytes on any
// machine. govulncheck promises no order ("There are no guarantees on the
// order of messages", internal/govulncheck) and emits findings in map
// order, so without this the file would differ run to run. Each message
// keeps its bytes; OSV entries are ordered by ID, findings by their compact
// JSON (duplicates, which normalise can make, are dropped), progress
// messages keep their order.
func (s *stream) canonical(dbName string) ([]byte, error) {
	order := make([]int, len(s.raw))
	keys := make([][]byte, len(s.raw))
	for i, raw := range s.raw {
		order[i] = i
		switch m := s.messages[i]; {
		case m.OSV != nil:
			keys[i] = []byte(m.OSV.ID)
		case m.Finding != nil:
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, err
			}
			keys[i] = b.Bytes()
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if ka, kb := s.messages[a].kind(), s.messages[b].kind(); ka != kb {
			return ka - kb
		}
		return bytes.Compare(keys[a], keys[b])
	})
	var out bytes.Buffer
	for n, i := range order {
		if n > 0 && keys[i] != nil && s.messages[i].Finding != nil && bytes.Equal(keys[i], keys[order[n-1]]) {
			continue
		}
		raw := []byte(s.raw[i])
		if s.messages[i].Config != nil && s.config.DB != "" {
			from, _ := json.Marshal(s.config.DB)
			to, _ := json.Marshal(dbName)
			raw = bytes.Replace(raw, from, to, 1)
		}
		out.Write(raw)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}
