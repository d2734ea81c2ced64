package vulnreport

import (
	"slices"
	"strings"
	"testing"
)

// probeStream is what govulncheck says of a binary with golang.org/x/text
// v0.3.0, calling transform.String on a UTF-16 decoder, built with Go
// 1.26.8: GO-2020-0015 at symbol level, GO-2021-0113 imported only,
// GO-2022-1059 required only, a standard library advisory reachable, and an
// advisory affecting the standard library and x/net reachable in one only.
func probeStream(t *testing.T) *stream {
	const text = "golang.org/x/text"
	return decode(t, streamOf(t,
		configMsg("file:///db"),
		osvMsg("GO-2020-0015", "Infinite loop when decoding some inputs in golang.org/x/text", affectedModule(text, "0.3.3")),
		osvMsg("GO-2021-0113", "Out-of-bounds read in golang.org/x/text/language", affectedModule(text, "0.3.7")),
		osvMsg("GO-2022-1059", "Denial of service via crafted Accept-Language header", affectedModule(text, "0.3.8")),
		osvMsg("GO-2026-6603", "HTTP/2 server memory exhaustion | Trailer", affectedModule("stdlib", "1.25.11", "1.26.9"), affectedModule("golang.org/x/net", "0.60.0")),
		findingMsg("GO-2020-0015", "v0.3.3", frame{Module: text, Version: "v0.3.0"}),
		findingMsg("GO-2020-0015", "v0.3.3", frame{Module: text, Version: "v0.3.0", Package: text + "/encoding/unicode"}),
		findingMsg("GO-2020-0015", "v0.3.3", frame{Module: text, Version: "v0.3.0", Package: text + "/encoding/unicode", Function: "Transform", Receiver: "utf16Decoder"}),
		findingMsg("GO-2020-0015", "v0.3.3", frame{Module: text, Version: "v0.3.0", Package: text + "/transform", Function: "String"}),
		findingMsg("GO-2020-0015", "v0.3.3", frame{Module: text, Version: "v0.3.0", Package: text + "/transform", Function: "String"}),
		findingMsg("GO-2021-0113", "v0.3.7", frame{Module: text, Version: "v0.3.0"}),
		findingMsg("GO-2021-0113", "v0.3.7", frame{Module: text, Version: "v0.3.0", Package: text + "/language"}),
		findingMsg("GO-2022-1059", "v0.3.8", frame{Module: text, Version: "v0.3.0"}),
		findingMsg("GO-2026-6603", "v1.26.9", frame{Module: "stdlib", Version: "v1.26.8"}),
		findingMsg("GO-2026-6603", "v0.60.0", frame{Module: "golang.org/x/net", Version: "v0.49.0"}),
		findingMsg("GO-2026-6603", "v1.26.9", frame{Module: "stdlib", Version: "v1.26.8", Package: "net/http", Function: "Do", Receiver: "Client"}),
	))
}

func findingOf(fs []Finding, osv, module string) *Finding {
	for i := range fs {
		if fs[i].OSV == osv && fs[i].Module == module {
			return &fs[i]
		}
	}
	return nil
}

func TestClassifyWithSymbolTable(t *testing.T) {
	fs := classify(probeStream(t), true)
	if len(fs) != 5 {
		t.Fatalf("%d findings, want 5 (one per advisory and module): %+v", len(fs), fs)
	}
	text := findingOf(fs, "GO-2020-0015", "golang.org/x/text")
	if text == nil || text.Reach != Reachable || text.Version != "v0.3.0" || text.Fixed != "v0.3.3" || text.Summary == "" || len(text.Aliases) != 1 {
		t.Fatalf("GO-2020-0015 = %+v, want reachable in golang.org/x/text v0.3.0, fixed in v0.3.3, with summary and aliases", text)
	}
	wantSyms := []string{"golang.org/x/text/encoding/unicode.utf16Decoder.Transform", "golang.org/x/text/transform.String"}
	if !slices.Equal(text.Symbols, wantSyms) {
		t.Errorf("symbols %q, want %q (sorted, once each)", text.Symbols, wantSyms)
	}
	for _, tc := range []struct {
		osv, module string
		reach       Reach
	}{
		{"GO-2021-0113", "golang.org/x/text", Imported},
		{"GO-2022-1059", "golang.org/x/text", Required},
		{"GO-2026-6603", "stdlib", Reachable},
		{"GO-2026-6603", "golang.org/x/net", Required},
	} {
		if f := findingOf(fs, tc.osv, tc.module); f == nil || f.Reach != tc.reach {
			t.Errorf("%s in %s = %+v, want %s", tc.osv, tc.module, f, tc.reach)
		}
	}
	// Most serious first.
	for i := 1; i < len(fs); i++ {
		if fs[i-1].Reach.rank() > fs[i].Reach.rank() {
			t.Errorf("finding %d (%s) before %d (%s)", i-1, fs[i-1].Reach, i, fs[i].Reach)
		}
	}
	c := BinaryReport{Findings: fs}.Counts()
	if c != (Counts{Reachable: 2, Other: 2}) {
		t.Errorf("counts %+v, want 2 reachable (GO-2026-6603 once, at its most serious), 2 other", c)
	}
}

// Without a symbol table govulncheck claims every vulnerable symbol: no
// finding may then say reachable, none may say "not reachable" either.
func TestClassifyWithoutSymbolTable(t *testing.T) {
	fs := classify(probeStream(t), false)
	for _, f := range fs {
		if f.Reach != Unknown || len(f.Symbols) > 0 || !strings.Contains(f.Note, "no symbol table") {
			t.Errorf("%s in %s: %+v, want unknown with a note and no symbols", f.OSV, f.Module, f)
		}
	}
	if c := (BinaryReport{Findings: fs}).Counts(); c != (Counts{Unknown: 4}) {
		t.Errorf("counts %+v, want 4 unknown", c)
	}
}

func TestQueryFindings(t *testing.T) {
	const karmada = "github.com/karmada-io/karmada"
	s := decode(t, streamOf(t,
		configMsg("file:///db"),
		osvMsg("GO-2025-3364", "fixed later", affectedModule(karmada, "1.12.0"), affectedModule("other", "9.0.0")),
		osvMsg("GO-2024-2817", "no fix", affectedModule(karmada)),
	))
	fs := queryFindings(s, karmada, "v1.11.0", "by version")
	if len(fs) != 2 || fs[0].OSV != "GO-2024-2817" || fs[1].OSV != "GO-2025-3364" {
		t.Fatalf("findings %+v, want GO-2024-2817 then GO-2025-3364", fs)
	}
	for _, f := range fs {
		if f.Reach != Unknown || f.Module != karmada || f.Version != "v1.11.0" || f.Note != "by version" {
			t.Errorf("%+v: want unknown reach in %s v1.11.0 with the note", f, karmada)
		}
	}
	if fs[0].Fixed != "" || fs[1].Fixed != "v1.12.0" {
		t.Errorf("fixed %q and %q, want none and v1.12.0 (the module's own range, not another's)", fs[0].Fixed, fs[1].Fixed)
	}
}

// An advisory can list several fixes for one module: backports on older
// minor lines, as separate introduced/fixed pairs of one range and as
// further ranges. The version reported is the latest of them, as
// govulncheck's fixed_version: the first release free of the advisory on
// every line. The events are ordered so that the first, the last, the
// lowest and the lexically greatest fix are each a different wrong answer.
func TestQueryFindingsSeveralFixes(t *testing.T) {
	const karmada = "github.com/karmada-io/karmada"
	semverRange := func(events ...obj) obj { return obj{"type": "SEMVER", "events": events} }
	backports := obj{"package": obj{"name": karmada, "ecosystem": "Go"}, "ranges": []obj{
		semverRange(obj{"introduced": "0"}, obj{"fixed": "1.9.4"}, obj{"introduced": "1.12.0"}, obj{"fixed": "1.12.1"}),
		semverRange(obj{"introduced": "1.10.0"}, obj{"fixed": "1.10.7"}),
	}}
	later := obj{"package": obj{"name": karmada, "ecosystem": "Go"}, "ranges": []obj{
		semverRange(obj{"introduced": "1.11.0"}, obj{"fixed": "1.11.3"}),
	}}
	s := decode(t, streamOf(t,
		configMsg("file:///db"),
		osvMsg("GO-2026-4101", "fixed on several lines", backports, later),
	))
	fs := queryFindings(s, karmada, "v1.11.0", "by version")
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want GO-2026-4101 alone", fs)
	}
	if fs[0].Fixed != "v1.12.1" {
		t.Errorf("GO-2026-4101 fixed in %q, want v1.12.1, the latest of its fixes (v1.9.4, v1.12.1, v1.10.7, v1.11.3)", fs[0].Fixed)
	}
}
