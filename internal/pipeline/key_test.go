package pipeline

import (
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// TestKeyOfEachKind: a pristine tree is rebuilt when the overrides change
// (it carries them) and not when anything else of the series does; a
// released tree depends on nothing of the series; a patched one on all of
// it.
func TestKeyOfEachKind(t *testing.T) {
	up := &pins.Upstream{Name: "up", Module: "example.com/up", Carry: []string{"lib"}}
	pin := pins.Pin{Version: "v1.0.0", Sum: "h1:x=", Series: "patches/up/1.0", Revision: 1}
	base := Inputs{SeriesHash: "h1:series=", OverridesHash: "h1:overrides=", TestsHash: "h1:tests="}
	key := func(in Inputs, kind provenance.Kind) string {
		t.Helper()
		k, err := in.key(up, pin, kind)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	series, overrides := base, base
	series.SeriesHash = "h1:another-patch="
	overrides.OverridesHash = "h1:another-override="
	overrides.SeriesHash = "h1:the-overrides-file-is-in-the-series="
	for _, c := range []struct {
		kind                     provenance.Kind
		series, overridesChanged bool
	}{
		{provenance.Patched, true, true},
		{provenance.Pristine, false, true},
		{provenance.Released, false, false},
	} {
		if got := key(series, c.kind) != key(base, c.kind); got != c.series {
			t.Errorf("%s tree: a patch change changes its key: %v, want %v", c.kind, got, c.series)
		}
		if got := key(overrides, c.kind) != key(base, c.kind); got != c.overridesChanged {
			t.Errorf("%s tree: an overrides change changes its key: %v, want %v", c.kind, got, c.overridesChanged)
		}
	}
	if key(base, provenance.Pristine) == key(base, provenance.Released) || key(base, provenance.Pristine) == key(base, provenance.Patched) {
		t.Error("two kinds of tree share a key")
	}
}
