package patchset

import (
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// hunk is one text fragment ready to match against a file's lines.
type hunk struct {
	index  int    // 1-based, within its file
	header string // "@@ -219,7 +219,6 @@ func BuildClusterConfig(..."
	// start is the 0-based index of the first old line where the hunk
	// says it applies.
	start    int
	old, new []string
	// Anchors, by git apply's rule: a hunk stated at line 0 or 1 must match
	// at the start of the file, and a hunk without trailing context must
	// match at its end (a diff with context has none only at the end).
	atStart, atEnd bool
}

func hunks(f *gitdiff.File, reverse bool) []hunk {
	out := make([]hunk, 0, len(f.TextFragments))
	for i, frag := range f.TextFragments {
		h := hunk{index: i + 1, header: strings.TrimSpace(frag.Header())}
		oldPos, oldCount := frag.OldPosition, frag.OldLines
		if reverse {
			oldPos, oldCount = frag.NewPosition, frag.NewLines
		}
		for _, l := range frag.Lines {
			op := l.Op
			if reverse {
				switch op {
				case gitdiff.OpAdd:
					op = gitdiff.OpDelete
				case gitdiff.OpDelete:
					op = gitdiff.OpAdd
				}
			}
			if op != gitdiff.OpAdd {
				h.old = append(h.old, l.Line)
			}
			if op != gitdiff.OpDelete {
				h.new = append(h.new, l.Line)
			}
		}
		// "@@ -5,0 +6,2 @@" inserts after line 5; "@@ -5,3 ..." starts at line 5.
		h.start = int(oldPos)
		if oldCount > 0 {
			h.start--
		}
		h.atStart = oldPos <= 1
		h.atEnd = frag.TrailingContext == 0
		out = append(out, h)
	}
	return out
}

// HunkResult says how one hunk fared.
type HunkResult struct {
	// Index is the hunk's 1-based number within its file's diff.
	Index int
	// Header is the hunk's @@ line.
	Header  string
	Applied bool
	// Offset is how many lines below (negative: above) the stated position
	// the hunk matched. Zero for an exact match.
	Offset int
	// Problem says why the hunk did not apply: which line it expected and
	// what it found.
	Problem string
	// Elsewhere is set when a hunk rejected at its stated position would
	// match at Offset; a strict failure then says the patch needs a
	// refresh rather than that it conflicts.
	Elsewhere bool
}

// matches reports whether h's old lines are at lines[pos:] and honour its
// start/end anchors.
func (h hunk) matches(lines []string, pos int) bool {
	if pos < 0 || pos+len(h.old) > len(lines) {
		return false
	}
	if h.atStart && pos != 0 {
		return false
	}
	if h.atEnd && pos+len(h.old) != len(lines) {
		return false
	}
	for i, want := range h.old {
		if lines[pos+i] != want {
			return false
		}
	}
	return true
}

// find returns where h matches, trying expect first and then, if
// allowOffset, the nearest positions on either side, never before floor
// (the end of the previous hunk).
func (h hunk) find(lines []string, expect, floor int, allowOffset bool) (int, bool) {
	if expect >= floor && h.matches(lines, expect) {
		return expect, true
	}
	if !allowOffset {
		return 0, false
	}
	for d := 1; expect-d >= floor || expect+d+len(h.old) <= len(lines); d++ {
		for _, pos := range []int{expect - d, expect + d} {
			if pos >= floor && h.matches(lines, pos) {
				return pos, true
			}
		}
	}
	return 0, false
}

// explain says why h does not match at pos. When more of the hunk's lines
// match somewhere else, it explains the mismatch there instead:
// "the first 5 lines match 19 lines further up, then line 203 differs"
// tells a person what upstream changed, the stated position often does not.
func (h hunk) explain(lines []string, pos, floor int) string {
	if pos < floor {
		return fmt.Sprintf("it would start at line %d, inside the previous hunk", pos+1)
	}
	at, n := pos, h.prefixMatch(lines, pos)
	// A full match elsewhere is reported by the caller as an offset; here
	// only a partial one helps.
	if best, bestN := h.bestPartial(lines, pos, floor); bestN > n && bestN < len(h.old) {
		at, n = best, bestN
	}
	where := ""
	if at != pos {
		where = fmt.Sprintf(" (nearest partial match: its first %d lines match %s)", n, DescribeOffset(at-pos))
	}
	if n < len(h.old) {
		if at+n >= len(lines) {
			return fmt.Sprintf("expected line %d to be %s, but the file has only %d lines%s", at+n+1, quote(h.old[n]), len(lines), where)
		}
		return fmt.Sprintf("expected line %d to be %s, found %s%s", at+n+1, quote(h.old[n]), quote(lines[at+n]), where)
	}
	if h.atStart && pos != 0 {
		return "the hunk must start the file"
	}
	if h.atEnd {
		return fmt.Sprintf("the hunk must end the file, but %d more lines follow line %d", len(lines)-pos-len(h.old), pos+len(h.old))
	}
	return "no match"
}

// prefixMatch counts how many of h's old lines match from pos on.
func (h hunk) prefixMatch(lines []string, pos int) int {
	n := 0
	for n < len(h.old) && pos+n < len(lines) && lines[pos+n] == h.old[n] {
		n++
	}
	return n
}

// bestPartial finds the position from floor on where the most leading old
// lines match, nearest to expect on a tie.
func (h hunk) bestPartial(lines []string, expect, floor int) (pos, n int) {
	pos = expect
	for p := floor; p < len(lines); p++ {
		m := h.prefixMatch(lines, p)
		if m > n || (m == n && m > 0 && abs(p-expect) < abs(pos-expect)) {
			pos, n = p, m
		}
	}
	return pos, n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// maxQuoted keeps a long line from flooding a message.
const maxQuoted = 120

func quote(line string) string {
	s := strings.TrimSuffix(line, "\n")
	if len(s) > maxQuoted {
		s = s[:maxQuoted] + "..."
	}
	q := fmt.Sprintf("%q", s)
	if !strings.HasSuffix(line, "\n") {
		q += " (no newline at end of file)"
	}
	return q
}

// applyHunks applies hs, which are in file order, to lines. Each hunk must
// match at its stated position, shifted by as much as the previous hunk
// moved (as GNU patch does), or, if allowOffset, at the nearest position
// where its context matches exactly. ok is false if any hunk did not apply.
func applyHunks(lines []string, hs []hunk, allowOffset bool) (out []string, results []HunkResult, ok bool) {
	ok = true
	floor, shift := 0, 0
	for _, h := range hs {
		r := HunkResult{Index: h.index, Header: h.header}
		expect := h.start + shift
		pos, found := h.find(lines, expect, floor, allowOffset)
		if !found {
			ok = false
			r.Problem = h.explain(lines, expect, floor)
			if !allowOffset {
				if at, elsewhere := h.find(lines, expect, floor, true); elsewhere {
					r.Elsewhere, r.Offset = true, at-h.start
				}
			}
			results = append(results, r)
			continue
		}
		r.Applied, r.Offset = true, pos-h.start
		shift = r.Offset
		out = append(out, lines[floor:pos]...)
		out = append(out, h.new...)
		floor = pos + len(h.old)
		results = append(results, r)
	}
	out = append(out, lines[floor:]...)
	return out, results, ok
}

// splitLines splits data into lines that keep their "\n", as go-gitdiff's
// lines do; only a last line without one lacks it.
func splitLines(data []byte) []string {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
