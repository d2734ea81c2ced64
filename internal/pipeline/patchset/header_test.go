package patchset

import (
	"strings"
	"testing"
)

const goodHeader = `Subject: Fix it
Description: First line.
 Second line.
 .
 After a blank line.
Why: Because.
Upstream-Issue: https://example.com/issues/1
Upstream-PR: https://example.com/pull/2
Applied-Upstream: v1.19.0-rc.0
Upstream-Backport: https://example.com/pull/3 (release-1.18,
 in no tag yet)
Drop-When: rebased onto v1.19.0
Holdfast-Fix: fix-it
---
`

const tinyDiff = `diff --git a/f.txt b/f.txt
--- a/f.txt
+++ b/f.txt
@@ -1 +1 @@
-a
+b
`

func TestParseHeader(t *testing.T) {
	p, err := Parse("0001-x.patch", []byte(goodHeader+tinyDiff))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Header{
		Subject:          "Fix it",
		Description:      "First line.\nSecond line.\n\nAfter a blank line.",
		Why:              "Because.",
		UpstreamIssue:    "https://example.com/issues/1",
		UpstreamPR:       "https://example.com/pull/2",
		AppliedUpstream:  "v1.19.0-rc.0",
		UpstreamBackport: "https://example.com/pull/3 (release-1.18,\nin no tag yet)",
		DropWhen:         "rebased onto v1.19.0",
		HoldfastFix:      "fix-it",
	}
	if p.Header != want {
		t.Errorf("header = %+v\nwant     %+v", p.Header, want)
	}
	if len(p.Files) != 1 || Target(p.Files[0]) != "f.txt" {
		t.Errorf("files = %v", p.Files)
	}
}

func TestParseRejects(t *testing.T) {
	without := func(field string) string {
		var keep []string
		for _, l := range strings.Split(goodHeader, "\n") {
			if !strings.HasPrefix(l, field+":") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"missing Why", without("Why") + tinyDiff, "0001-x.patch: header field Why is missing or empty"},
		{"missing Drop-When", without("Drop-When") + tinyDiff, "0001-x.patch: header field Drop-When is missing or empty"},
		{"missing Holdfast-Fix", without("Holdfast-Fix") + tinyDiff, "header field Holdfast-Fix is missing"},
		{"missing Applied-Upstream", without("Applied-Upstream") + tinyDiff, "header field Applied-Upstream is missing"},
		{"empty Subject", strings.Replace(goodHeader, "Subject: Fix it", "Subject:  ", 1) + tinyDiff, "header field Subject is missing or empty"},
		{"unknown field", "Sbject: typo\n" + goodHeader + tinyDiff, `0001-x.patch:1: unknown header field "Sbject"`},
		{"duplicate field", "Why: twice\n" + goodHeader + tinyDiff, "0001-x.patch:7: field Why is already given at line 1"},
		{"bad Applied-Upstream", strings.Replace(goodHeader, "v1.19.0-rc.0", "1.19", 1) + tinyDiff, `0001-x.patch:9: Applied-Upstream "1.19" must be "no"`},
		{"Upstream-Backport without URL", strings.Replace(goodHeader, "https://example.com/pull/3", "PR 3", 1) + tinyDiff, `0001-x.patch:10: Upstream-Backport must start with the backport's https:// URL, got "PR 3 (release-1.18,"`},
		{"no separator", strings.Replace(goodHeader, "---\n", "", 1) + "\n", `no "---" line ending the header`},
		{"orphan continuation", " dangling\n" + goodHeader + tinyDiff, "0001-x.patch:1: continuation line without a field"},
		{"not a field", "just words\n" + goodHeader + tinyDiff, "0001-x.patch:1: want `Field: value`"},
		{"no diff", goodHeader, "no diff after the \"---\" line"},
		{"text before diff", goodHeader + "stray words\n" + tinyDiff, `0001-x.patch:15: text between the header and the first diff ("stray words")`},
		{"rename", goodHeader + "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", "renames and copies are not supported"},
		{"escaping path", goodHeader + strings.ReplaceAll(tinyDiff, "f.txt", "../f.txt"), `diff path "../f.txt" must be a clean path`},
		{"file twice", goodHeader + tinyDiff + tinyDiff, "f.txt appears twice"},
		{"prose regression test", strings.Replace(goodHeader, "---\n", "Holdfast-Regression-Test: see 0002\n---\n", 1) + tinyDiff, `0001-x.patch:14: Holdfast-Regression-Test: "see" is not a Test function name`},
		{"supports nothing", strings.Replace(goodHeader, "---\n", "Holdfast-Regression-Test: supports\n---\n", 1) + tinyDiff, `Holdfast-Regression-Test: "supports" names no fix`},
		{"not a feature test", strings.Replace(goodHeader, "---\n", "Holdfast-Feature-Test: Testify\n---\n", 1) + tinyDiff, `Holdfast-Feature-Test: "Testify" is not a Test function name`},
		{"bad hunk count", goodHeader + strings.Replace(tinyDiff, "@@ -1 +1 @@", "@@ -1,2 +1 @@", 1), "0001-x.patch: diff (from line 15): gitdiff: line 5: fragment header miscounts lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("0001-x.patch", []byte(tt.content))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.content)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRegressionAndFeatureTests(t *testing.T) {
	for _, tc := range []struct {
		value, feature     string
		tests, supports, f []string
	}{
		{value: "TestA, TestB\nTest_c", feature: "TestF", tests: []string{"TestA", "TestB", "Test_c"}, f: []string{"TestF"}},
		{value: "supports own-credential-guard member-credential-rotation", supports: []string{"own-credential-guard", "member-credential-rotation"}},
		{},
	} {
		h := Header{HoldfastRegressionTest: tc.value, HoldfastFeatureTest: tc.feature}
		tests, supports, err := h.RegressionTests()
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		f, err := h.FeatureTests()
		if err != nil {
			t.Fatalf("%q: %v", tc.feature, err)
		}
		if strings.Join(tests, " ") != strings.Join(tc.tests, " ") || strings.Join(supports, " ") != strings.Join(tc.supports, " ") || strings.Join(f, " ") != strings.Join(tc.f, " ") {
			t.Errorf("%q/%q: tests %q supports %q feature %q", tc.value, tc.feature, tests, supports, f)
		}
	}
}
