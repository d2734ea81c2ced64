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
