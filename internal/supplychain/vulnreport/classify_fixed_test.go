package vulnreport

import "testing"

// The fixed version of a finding comes from whichever of its messages
// carries one: a later message without it does not erase it, and a later
// message with it fills a finding that had none.
func TestClassifyKeepsTheFixedVersionOfAnyMessage(t *testing.T) {
	const text = "golang.org/x/text"
	s := decode(t, streamOf(t,
		configMsg("file:///db"),
		osvMsg("GO-2021-0113", "Out-of-bounds read", affectedModule(text, "0.3.7")),
		osvMsg("GO-2022-1059", "Denial of service", affectedModule(text, "0.3.8")),
		findingMsg("GO-2021-0113", "v0.3.7", frame{Module: text, Version: "v0.3.0"}),
		findingMsg("GO-2021-0113", "", frame{Module: text, Version: "v0.3.0", Package: text + "/language"}),
		findingMsg("GO-2022-1059", "", frame{Module: text, Version: "v0.3.0"}),
		findingMsg("GO-2022-1059", "v0.3.8", frame{Module: text, Version: "v0.3.0", Package: text + "/language"}),
	))
	fs := classify(s, true)
	for osv, want := range map[string]string{"GO-2021-0113": "v0.3.7", "GO-2022-1059": "v0.3.8"} {
		if f := findingOf(fs, osv, text); f == nil || f.Fixed != want {
			t.Errorf("%s: finding %+v, want fixed %s", osv, f, want)
		}
	}
}
