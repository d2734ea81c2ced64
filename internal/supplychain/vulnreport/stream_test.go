package vulnreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// streamOf writes messages the way govulncheck does: each indented by two
// spaces, one after the other.
func streamOf(t *testing.T, msgs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, m := range msgs {
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

type obj = map[string]any

// Configs and findings are written from this package's types, whose fields
// are in govulncheck's order; OSV entries, which are only ever copied, from
// maps.
func configMsg(db string) message {
	return message{Config: &streamConfig{ProtocolVersion: "v1.0.0", ScannerName: "govulncheck", ScannerVersion: "v1.9.0", DB: db, ScanLevel: "symbol", ScanMode: "binary"}}
}

func osvMsg(id, summary string, affected ...obj) obj {
	if affected == nil {
		affected = []obj{}
	}
	return obj{"osv": obj{"id": id, "summary": summary, "aliases": []string{"CVE-" + id}, "affected": affected}}
}

func affectedModule(module string, fixed ...string) obj {
	events := []obj{{"introduced": "0"}}
	for _, f := range fixed {
		events = append(events, obj{"fixed": f})
	}
	return obj{"package": obj{"name": module, "ecosystem": "Go"}, "ranges": []obj{{"type": "SEMVER", "events": events}}}
}

func findingMsg(osv, fixed string, fr frame) message {
	return message{Finding: &streamFinding{OSV: osv, FixedVersion: fixed, Trace: []frame{fr}}}
}

func decode(t *testing.T, data []byte) *stream {
	t.Helper()
	s, err := decodeStream(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeStreamRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "does not start with a config message"},
		{"not JSON", []byte("govulncheck: unrecognized binary format\n"), "reading govulncheck's JSON stream at message 1"},
		{"no config first", streamOf(t, obj{"progress": obj{"message": "x"}}, configMsg("db")), "does not start with a config message"},
		{"config lacks protocol", streamOf(t, obj{"config": obj{"scan_mode": "binary"}}), `protocol ""`},
		{"unknown message", streamOf(t, configMsg("db"), obj{"verdict": "fine"}), "message 2: none of config"},
		{"other protocol", streamOf(t, obj{"config": obj{"protocol_version": "v2.0.0"}}), `protocol "v2.0.0"`},
		{"truncated", streamOf(t, configMsg("db"))[:40], "at message 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeStream(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The same findings in any order, with the database at any local path, give
// the same bytes; each message keeps govulncheck's own bytes, the config
// comes first and names the snapshot.
func TestCanonicalIsOrderAndPathIndependent(t *testing.T) {
	msgs := []any{
		obj{"progress": obj{"message": "Scanning your binary for known vulnerabilities..."}},
		obj{"SBOM": obj{"go_version": "go1.26.8"}},
		obj{"progress": obj{"message": "Fetching vulnerabilities from the database..."}},
		osvMsg("GO-2026-0002", "b"),
		osvMsg("GO-2026-0001", "a"),
		findingMsg("GO-2026-0002", "v1.2.0", frame{Module: "example.com/m", Version: "v1.0.0"}),
		findingMsg("GO-2026-0001", "v1.1.0", frame{Module: "example.com/m", Version: "v1.0.0"}),
		findingMsg("GO-2026-0001", "v1.1.0", frame{Module: "example.com/m", Version: "v1.0.0", Package: "example.com/m/p"}),
	}
	a := decode(t, streamOf(t, append([]any{configMsg("file:///home/a/.cache/vulndb/v0")}, msgs...)...))
	// govulncheck writes progress in the order of its steps; everything
	// else comes in whatever order its maps give.
	reversed := []any{configMsg("file:///ci/checkout/.cache/vulndb/v0"), msgs[0], msgs[2]}
	for i := len(msgs) - 1; i >= 0; i-- {
		if i != 0 && i != 2 {
			reversed = append(reversed, msgs[i])
		}
	}
	b := decode(t, streamOf(t, reversed...))
	ca, err := a.canonical("golang.org/x/vulndb@v0")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.canonical("golang.org/x/vulndb@v0")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca, cb) {
		t.Fatalf("canonical streams differ:\n%s\n---\n%s", ca, cb)
	}
	s := string(ca)
	if strings.Contains(s, "file://") || !strings.Contains(s, `"db": "golang.org/x/vulndb@v0"`) {
		t.Errorf("config's db not replaced by the snapshot name:\n%s", s)
	}
	order := []string{`"config"`, "Scanning your binary", "Fetching vulnerabilities", `"SBOM"`, `"id": "GO-2026-0001"`, `"id": "GO-2026-0002"`, `"finding"`}
	last := -1
	for _, want := range order {
		i := strings.Index(s, want)
		if i <= last {
			t.Fatalf("%q at %d, not after the previous message (%d):\n%s", want, i, last, s)
		}
		last = i
	}
	// Still a stream govulncheck (and this reader) reads, message for message.
	again := decode(t, ca)
	if len(again.messages) != len(a.messages) {
		t.Errorf("%d messages after canonical, %d before", len(again.messages), len(a.messages))
	}
}

// A package of a nested module is credited to that module whatever
// govulncheck's map order credited it to, with that module's fixed
// version; the standard library and right attributions are left alone.
func TestNormaliseCreditsNestedModules(t *testing.T) {
	const otel, sdk = "go.opentelemetry.io/otel", "go.opentelemetry.io/otel/sdk"
	header := []any{configMsg("file:///db"),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: otel, Version: "v1.39.0"}),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: sdk, Version: "v1.39.0"}),
		findingMsg("GO-2026-6599", "v1.26.9", frame{Module: "stdlib", Version: "v1.26.8", Package: "html/template", Function: "Execute", Receiver: "Template"}),
	}
	right := findingMsg("GO-2026-4394", "v1.40.0", frame{Module: sdk, Version: "v1.39.0", Package: sdk + "/internal/x", Function: "init"})
	wrong := findingMsg("GO-2026-4394", "", frame{Module: otel, Version: "v1.39.0", Package: sdk + "/internal/x", Function: "init"})
	var got [][]byte
	for _, f := range []any{right, wrong} {
		s := decode(t, streamOf(t, append(header, f)...))
		if err := s.normalise(); err != nil {
			t.Fatal(err)
		}
		c, err := s.canonical("db")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Fatalf("a finding credited to the parent module is not corrected:\n%s\n---\n%s", got[0], got[1])
	}
	s := decode(t, got[1])
	var sym *streamFinding
	for _, m := range s.messages {
		if f := m.Finding; f != nil && f.Trace[0].Function == "init" {
			sym = f
		}
	}
	if sym == nil || sym.Trace[0].Module != sdk || sym.FixedVersion != "v1.40.0" {
		t.Errorf("corrected finding = %+v, want module %s fixed v1.40.0", sym, sdk)
	}
	if !strings.Contains(string(got[1]), `"module": "stdlib"`) {
		t.Errorf("stdlib finding lost:\n%s", got[1])
	}
}
