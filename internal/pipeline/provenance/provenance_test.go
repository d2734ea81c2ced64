package provenance

import (
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []Record{
		{
			Kind: Patched, Upstream: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2",
			Sum: "h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4=", Revision: 1, HoldfastVersion: "v1.18.2-holdfast.1",
			Series: "patches/karmada/1.18", SeriesHash: "h1:abc=", Patches: []string{"0001-a.patch", "0002-b.patch"},
			Carried: []string{"membercred"}, TestsHash: "h1:def=",
		},
		{
			Kind: Pristine, Upstream: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2", Sum: "h1:x=",
			Overrides: []string{"golang.org/x/net v0.49.0 => v0.60.0 (fixes GO-2026-6603)"}, GoLine: "1.25.10 => 1.26.0 (godebug default=go1.25; why)",
		},
		{Kind: Released, Upstream: "karmada", Module: "github.com/karmada-io/karmada", Version: "v1.18.2", Sum: "h1:x="},
	}
	for _, r := range tests {
		t.Run(string(r.Kind), func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, r); err != nil {
				t.Fatal(err)
			}
			got, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
			}
		})
	}
}

func TestMarshalIsShellReadable(t *testing.T) {
	out := string(Record{Kind: Patched, Version: "v1.18.2", Revision: 3, HoldfastVersion: "v1.18.2-holdfast.3"}.Marshal())
	for _, want := range []string{"\nholdfast-version: v1.18.2-holdfast.3\n", "\nholdfast-revision: 3\n", "\nkind: patched\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "series-hash") {
		t.Errorf("empty fields are written:\n%s", out)
	}
}

func TestParseRejects(t *testing.T) {
	tests := map[string]string{
		"unknown key":  "kind: patched\nflavour: x\n",
		"no separator": "kind patched\n",
		"bad kind":     "kind: cooked\n",
		"bad revision": "kind: patched\nholdfast-revision: one\n",
	}
	for name, data := range tests {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: Parse accepted %q", name, data)
		}
	}
}
