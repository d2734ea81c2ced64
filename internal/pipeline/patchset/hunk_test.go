package patchset

import (
	"strings"
	"testing"
)

// Repetitive code, where one hunk's context is also another's: two
// functions ending the same way.
const twoFuncs = "func a() error {\n\tx()\n\treturn nil\n}\n\nfunc b() error {\n\tx()\n\treturn nil\n}\n"

var returnErr = []string{"\tx()\n", "\treturn err\n", "}\n"}

func returnNilHunk(index, start int) hunk {
	return hunk{index: index, start: start, old: []string{"\tx()\n", "\treturn nil\n", "}\n"}, new: returnErr}
}

// applyLines is applyHunks on text, turning a panic (a hunk placed before
// the end of the previous one slices backwards) into a failure.
func applyLines(t *testing.T, text string, hs []hunk, allowOffset bool) (string, []HunkResult, bool) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("applyHunks panicked: %v", p)
		}
	}()
	out, results, ok := applyHunks(splitLines([]byte(text)), hs, allowOffset)
	return strings.Join(out, ""), results, ok
}

// The offset search never goes back past the end of the previous hunk, even
// where the context matches there and is nearer than the right place: the
// text before it has been consumed, and a hunk applying there would apply
// twice to one spot and skip its own.
func TestOffsetSearchStopsAtThePreviousHunk(t *testing.T) {
	// Upstream added six lines between a and b: b's hunk is 6 lines down,
	// and a's copy of the same context is only 5 lines up.
	moved := strings.Replace(twoFuncs, "}\n\nfunc b", "}\n\n// 1\n// 2\n// 3\n// 4\n// 5\n// 6\nfunc b", 1)
	got, results, ok := applyLines(t, moved, []hunk{returnNilHunk(1, 1), returnNilHunk(2, 6)}, true)
	if !ok {
		t.Fatalf("did not apply: %+v", results)
	}
	if results[1].Offset != 6 {
		t.Errorf("hunk #2 applied at offset %d, want 6 (its own function, not back inside hunk #1's)", results[1].Offset)
	}
	if want := strings.ReplaceAll(moved, "return nil", "return err"); got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
}

// A hunk stated inside the previous one (a malformed or hand-edited patch)
// is refused at that position, not applied over lines already replaced.
func TestHunkInsideThePreviousOneIsRefused(t *testing.T) {
	tail := hunk{index: 2, start: 2, old: []string{"\treturn nil\n", "}\n"}, new: []string{"\treturn err\n", "}\n"}}
	_, results, ok := applyLines(t, twoFuncs, []hunk{returnNilHunk(1, 1), tail}, false)
	if ok || results[1].Applied {
		t.Fatalf("a hunk overlapping the previous one applied: %+v", results)
	}
	if want := "it would start at line 3, inside the previous hunk"; results[1].Problem != want {
		t.Errorf("problem %q, want %q", results[1].Problem, want)
	}
}
