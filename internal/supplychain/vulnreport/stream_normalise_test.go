package vulnreport

import (
	"strings"
	"testing"
)

// normaliseFinding runs normalise over the module-level findings in header
// plus f, and returns what became of f.
func normaliseFinding(t *testing.T, header []any, f message) *streamFinding {
	t.Helper()
	s := decode(t, streamOf(t, append(header, f)...))
	if err := s.normalise(); err != nil {
		t.Fatal(err)
	}
	return s.messages[len(s.messages)-1].Finding
}

// The credited module is one whose path holds the package (the package may
// be the module's root package), the longest such; a longer module that
// does not hold it is no candidate, and a package no affected module holds
// is left as govulncheck wrote it.
func TestNormaliseCreditsOnlyAModuleHoldingThePackage(t *testing.T) {
	const otel, sdk, long = "go.opentelemetry.io/otel", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	header := []any{configMsg("file:///db"),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: otel, Version: "v1.39.0"}),
		findingMsg("GO-2026-4394", "v1.41.0", frame{Module: sdk, Version: "v1.38.0"}),
		findingMsg("GO-2026-4394", "v1.42.0", frame{Module: long, Version: "v1.37.0"}),
	}
	got := normaliseFinding(t, header, findingMsg("GO-2026-4394", "", frame{Module: otel, Version: "v1.39.0", Package: sdk}))
	if fr := got.Trace[0]; fr.Module != sdk || fr.Version != "v1.38.0" || got.FixedVersion != "v1.41.0" {
		t.Errorf("root package of %s credited to %s %s (fixed %q), want %s v1.38.0 (fixed v1.41.0)", sdk, fr.Module, fr.Version, got.FixedVersion, sdk)
	}
	orphan := frame{Module: "example.com/m", Version: "v1.0.0", Package: "example.com/m/p", Function: "F"}
	got = normaliseFinding(t, header, findingMsg("GO-2026-9999", "v1.1.0", orphan))
	if got.Trace[0] != orphan || got.FixedVersion != "v1.1.0" {
		t.Errorf("finding of an advisory without module-level findings changed to %+v", got)
	}
}

// Every misattributed finding is corrected, also after a right one.
func TestNormaliseGoesOnAfterARightFinding(t *testing.T) {
	const otel, sdk = "go.opentelemetry.io/otel", "go.opentelemetry.io/otel/sdk"
	s := decode(t, streamOf(t, configMsg("file:///db"),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: otel, Version: "v1.39.0"}),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: sdk, Version: "v1.39.0"}),
		findingMsg("GO-2026-4394", "v1.40.0", frame{Module: sdk, Version: "v1.39.0", Package: sdk + "/trace"}),
		findingMsg("GO-2026-4394", "", frame{Module: otel, Version: "v1.39.0", Package: sdk + "/internal/x"}),
	))
	if err := s.normalise(); err != nil {
		t.Fatal(err)
	}
	if got := s.messages[len(s.messages)-1].Finding.Trace[0].Module; got != sdk {
		t.Errorf("the finding after a right one is credited to %s, want %s", got, sdk)
	}
}

// Duplicate findings (normalise can make them) are written once, and the
// findings after them still are; only the config's db is replaced, not the
// same text in another message.
func TestCanonicalDropsOnlyDuplicateFindings(t *testing.T) {
	dup := findingMsg("GO-2026-0001", "v1.1.0", frame{Module: "example.com/m", Version: "v1.0.0"})
	s := decode(t, streamOf(t, configMsg("file:///db"),
		osvMsg("GO-2026-0001", "file:///db"),
		dup, dup,
		// Sorts after the duplicates.
		findingMsg("GO-2026-0002", "v1.1.0", frame{Module: "example.com/m", Version: "v1.0.0"}),
	))
	c, err := s.canonical("snapshot")
	if err != nil {
		t.Fatal(err)
	}
	out := string(c)
	if n := strings.Count(out, `"finding"`); n != 2 {
		t.Errorf("%d findings written, want 2 (the duplicate once, then GO-2026-0002):\n%s", n, out)
	}
	if !strings.Contains(out, `"summary": "file:///db"`) {
		t.Errorf("the advisory's summary was rewritten along with the config's db:\n%s", out)
	}
}
