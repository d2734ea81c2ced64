package patchset

import (
	"strings"
	"testing"
)

// A blank line between fields ends the field before it; the header goes on.
func TestParseHeaderBlankLineBetweenFields(t *testing.T) {
	content := strings.Replace(goodHeader, "Why: Because.\n", "Why: Because.\n\n", 1) + tinyDiff
	p, err := Parse("0001-x.patch", []byte(content))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if p.Header.Why != "Because." || p.Header.HoldfastFix != "fix-it" {
		t.Errorf("Why %q, Holdfast-Fix %q; want the fields on both sides of the blank line", p.Header.Why, p.Header.HoldfastFix)
	}
}

// A patch whose first line is the separator has a header, an empty one:
// the error names the missing fields, not a missing separator.
func TestParseEmptyHeader(t *testing.T) {
	_, err := Parse("0001-x.patch", []byte(SeparatorLine+"\n"+tinyDiff))
	if err == nil || !strings.Contains(err.Error(), "header field Subject is missing or empty") {
		t.Errorf("err = %v, want the missing Subject named", err)
	}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"", "/etc/passwd", "a/../b", "a//b", "..", "../b"} {
		if err := checkPath(p); err == nil {
			t.Errorf("checkPath(%q) = nil, want a refusal", p)
		}
	}
	for _, p := range []string{"a", "pkg/util/x.go", "..a/b"} {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) = %v, want nil", p, err)
		}
	}
}
