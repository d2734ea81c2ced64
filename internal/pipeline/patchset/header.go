package patchset

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Header is the metadata every patch file starts with.
type Header struct {
	// Subject says in one line what the patch changes.
	Subject string
	// Description says more about how (optional, may span lines).
	Description string
	// Why says why holdfast carries the patch.
	Why string
	// UpstreamIssue and UpstreamPR link the upstream discussion and fix,
	// or say "none".
	UpstreamIssue string
	UpstreamPR    string
	// AppliedUpstream is the first upstream tag containing the fix, or
	// "no".
	AppliedUpstream string
	// UpstreamBackport is the backport of the fix to this series' release
	// branch, when one was merged but no tag holds it yet (optional): a
	// URL, then what is known about it. It says the patch can go at the
	// first patch release cut from that branch, before AppliedUpstream's
	// minor.
	UpstreamBackport string
	// DropWhen says when the patch can be dropped.
	DropWhen string
	// HoldfastFix is the holdfast fix this patch belongs to, the id that
	// ties the patches of all series for one fix together.
	HoldfastFix string
	// HoldfastRegressionTest names the regression tests in
	// tests/<upstream>/ that show the bug this patch fixes: each must fail
	// on the pristine tree and pass on the patched one (RegressionTests
	// reads it). A patch with no test of its own (a chart, a manifest, a
	// refactor another patch of the fix builds on) says instead which fix
	// it supports: "supports <fix-id>...". Optional here; the upstream-test
	// gate (internal/pipeline/treetest) refuses a fix none of whose patches
	// names a test.
	HoldfastRegressionTest string
	// HoldfastFeatureTest names tests in tests/<upstream>/ that no
	// pristine release can pass (they check holdfast-only behaviour, such
	// as holdfast's metrics): they run on the patched tree only and are
	// no evidence that upstream fixed anything (optional).
	HoldfastFeatureTest string
	// Author is optional.
	Author string
}

// SeparatorLine ends the header; the diff follows it.
const SeparatorLine = "---"

type headerField struct {
	name     string
	required bool
	value    func(*Header) *string
}

// headerFields is the order in which fields are documented and checked.
var headerFields = []headerField{
	{"Subject", true, func(h *Header) *string { return &h.Subject }},
	{"Description", false, func(h *Header) *string { return &h.Description }},
	{"Why", true, func(h *Header) *string { return &h.Why }},
	{"Upstream-Issue", true, func(h *Header) *string { return &h.UpstreamIssue }},
	{"Upstream-PR", true, func(h *Header) *string { return &h.UpstreamPR }},
	{"Applied-Upstream", true, func(h *Header) *string { return &h.AppliedUpstream }},
	{"Upstream-Backport", false, func(h *Header) *string { return &h.UpstreamBackport }},
	{"Drop-When", true, func(h *Header) *string { return &h.DropWhen }},
	{"Holdfast-Fix", true, func(h *Header) *string { return &h.HoldfastFix }},
	{"Holdfast-Regression-Test", false, func(h *Header) *string { return &h.HoldfastRegressionTest }},
	{"Holdfast-Feature-Test", false, func(h *Header) *string { return &h.HoldfastFeatureTest }},
	{"Author", false, func(h *Header) *string { return &h.Author }},
}

func knownFields() string {
	names := make([]string, len(headerFields))
	for i, f := range headerFields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// parseHeader reads header lines up to the separator and returns the header
// and the number of lines consumed, separator included. Field names are
// matched case-insensitively as in RFC 822; a line starting with a space or
// tab continues the previous field, and a continuation line holding only
// "." is an empty line (DEP-3).
func parseHeader(name string, lines []string) (Header, int, error) {
	var h Header
	var errs []string
	seen := map[string]int{}
	var current *string
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	end := -1
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		if line == SeparatorLine {
			end = i
			break
		}
		if strings.TrimSpace(line) == "" {
			current = nil
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if current == nil {
				fail(i+1, "continuation line without a field before it")
				continue
			}
			text := strings.TrimSpace(line)
			if text == "." {
				text = ""
			}
			*current += "\n" + text
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			fail(i+1, "want `Field: value`, got %q", line)
			current = nil
			continue
		}
		f, known := lookupField(key)
		if !known {
			fail(i+1, "unknown header field %q (known: %s)", key, knownFields())
			current = nil
			continue
		}
		if first, dup := seen[f.name]; dup {
			fail(i+1, "field %s is already given at line %d", f.name, first)
		}
		seen[f.name] = i + 1
		current = f.value(&h)
		*current = strings.TrimSpace(value)
	}
	if end < 0 {
		return h, 0, fmt.Errorf("%s: no %q line ending the header; a patch file is a header, a line holding only %q, then the diff", name, SeparatorLine, SeparatorLine)
	}
	for _, f := range headerFields {
		v := f.value(&h)
		*v = strings.TrimSpace(*v)
		if f.required && *v == "" {
			errs = append(errs, fmt.Sprintf("%s: header field %s is missing or empty", name, f.name))
		}
	}
	if v := h.AppliedUpstream; v != "" && v != "no" && !semver.IsValid(v) {
		errs = append(errs, fmt.Sprintf("%s:%d: Applied-Upstream %q must be \"no\" or the first upstream tag with the fix, e.g. v1.19.0-rc.0", name, seen["Applied-Upstream"], v))
	}
	if v := h.UpstreamBackport; v != "" && !strings.HasPrefix(v, "https://") {
		errs = append(errs, fmt.Sprintf("%s:%d: Upstream-Backport must start with the backport's https:// URL, got %q", name, seen["Upstream-Backport"], firstLine(v)))
	}
	if _, _, err := h.RegressionTests(); err != nil {
		errs = append(errs, fmt.Sprintf("%s:%d: %v", name, seen["Holdfast-Regression-Test"], err))
	}
	if _, err := h.FeatureTests(); err != nil {
		errs = append(errs, fmt.Sprintf("%s:%d: %v", name, seen["Holdfast-Feature-Test"], err))
	}
	if len(errs) > 0 {
		return h, 0, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return h, end + 1, nil
}

func lookupField(key string) (headerField, bool) {
	for _, f := range headerFields {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return headerField{}, false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// SupportsKeyword starts a Holdfast-Regression-Test value naming the fixes a
// patch supports instead of tests of its own.
const SupportsKeyword = "supports"

// RegressionTests reads Holdfast-Regression-Test: the Test functions it
// names, or, for "supports <fix-id>...", the fixes whose tests cover this
// patch. Names are separated by spaces, commas or line breaks. Both are
// empty when the field is absent.
func (h Header) RegressionTests() (tests, supports []string, err error) {
	words := listWords(h.HoldfastRegressionTest)
	if len(words) > 0 && words[0] == SupportsKeyword {
		if len(words) == 1 {
			return nil, nil, fmt.Errorf("Holdfast-Regression-Test: %q names no fix", SupportsKeyword)
		}
		return nil, words[1:], nil
	}
	tests, err = testNames("Holdfast-Regression-Test", words)
	return tests, nil, err
}

// FeatureTests reads Holdfast-Feature-Test.
func (h Header) FeatureTests() ([]string, error) {
	return testNames("Holdfast-Feature-Test", listWords(h.HoldfastFeatureTest))
}

func listWords(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// testNames checks that every word could name a top-level Go test, so a
// prose value ("see 0002") is refused rather than read as test names.
func testNames(field string, words []string) ([]string, error) {
	for _, w := range words {
		if !isTestName(w) {
			return nil, fmt.Errorf("%s: %q is not a Test function name (want TestXxx, or %q followed by fix ids)", field, w, SupportsKeyword)
		}
	}
	return words, nil
}

func isTestName(w string) bool {
	rest, ok := strings.CutPrefix(w, "Test")
	if !ok {
		return false
	}
	for i, r := range rest {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && r >= 'a' && r <= 'z' {
			return false // Testify is not a test
		}
		if !letter && r != '_' && !(r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
