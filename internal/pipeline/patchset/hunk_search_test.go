package patchset

import (
	"strings"
	"testing"
)

// lines turns "a b c" into the lines "a\n", "b\n", "c\n".
func linesOf(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		out = append(out, f+"\n")
	}
	return out
}

// The offset search looks above as well as below the stated position, down
// to the file's first line, and below up to the last position where the
// hunk still fits, even once the other side is exhausted.
func TestFindSearchesBothWaysToTheEdges(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		old    string
		expect int
		want   int
	}{
		{"above only", "x y a b x x x x", "a b", 4, 2},
		{"first line, nothing fits below", "a b x y", "a b", 2, 0},
		{"below after the top is passed", "x x x a b x x x", "a b", 0, 3},
		{"last line, nothing left above", "x x x x x x a b", "a b", 2, 6},
	}
	for _, tt := range tests {
		h := hunk{start: tt.expect, old: linesOf(tt.old)}
		got, ok := h.find(linesOf(tt.file), tt.expect, 0, true)
		if !ok || got != tt.want {
			t.Errorf("%s: find = %d, %v; want %d, true", tt.name, got, ok, tt.want)
		}
	}
}

// A hunk stated at line 1 must start the file (git apply's rule), so it does
// not match two lines further down even with offsets allowed.
func TestHunkAtLineOneAnchorsTheStart(t *testing.T) {
	const diff = `diff --git a/f.txt b/f.txt
--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
-a
 b
+c
`
	p, err := Parse("anchor.patch", []byte(goodHeader+diff))
	if err != nil {
		t.Fatal(err)
	}
	hs := hunks(p.Files[0], false)
	if len(hs) != 1 || !hs[0].atStart {
		t.Fatalf("hunk stated at line 1: atStart = %v, want true", len(hs) == 1 && hs[0].atStart)
	}
	if _, _, ok := applyHunks(linesOf("new top a b"), hs, true); ok {
		t.Error("a hunk stated at line 1 applied below the file's start")
	}
}

// The second hunk is looked for where the first one's move puts it: of two
// places its context matches, the one shifted like the first hunk wins.
func TestNextHunkFollowsThePreviousShift(t *testing.T) {
	file := linesOf("x x x A x B x x x x B x")
	hs := []hunk{
		{index: 1, start: 1, old: linesOf("A"), new: linesOf("A1")},
		{index: 2, start: 8, old: linesOf("B"), new: linesOf("B1")},
	}
	_, results, ok := applyHunks(file, hs, true)
	if !ok || len(results) != 2 {
		t.Fatalf("applyHunks: ok %v, results %+v", ok, results)
	}
	if results[0].Offset != 2 || results[1].Offset != 2 {
		t.Errorf("offsets %d, %d; want 2, 2 (the second hunk shifted like the first)", results[0].Offset, results[1].Offset)
	}
}

func TestBestPartial(t *testing.T) {
	old := linesOf("a b c")
	tests := []struct {
		name          string
		file          string
		expect        int
		wantPos, want int
	}{
		{"nearer later tie wins", "a b x a b y z", 4, 3, 2},
		{"nearer earlier tie wins", "a b x x a b", 1, 0, 2},
		{"equal distance: the earlier", "x a b x x a b", 3, 1, 2},
		{"longer beats nearer", "a b c x a b x", 4, 0, 3},
		{"no match stays at the stated position", "x y z", 1, 1, 0},
	}
	for _, tt := range tests {
		pos, n := hunk{old: old}.bestPartial(linesOf(tt.file), tt.expect, 0)
		if pos != tt.wantPos || n != tt.want {
			t.Errorf("%s: bestPartial = %d, %d; want %d, %d", tt.name, pos, n, tt.wantPos, tt.want)
		}
	}
}

// Strict: a hunk that matches fully elsewhere is explained by what differs
// at its stated position; the caller reports the full match as Elsewhere.
func TestExplainStrictWithAFullMatchElsewhere(t *testing.T) {
	h := hunk{index: 1, start: 1, old: linesOf("a b"), new: linesOf("a c")}
	_, results, ok := applyHunks(linesOf("x y z a b"), []hunk{h}, false)
	if ok || len(results) != 1 {
		t.Fatalf("applyHunks: ok %v, results %+v", ok, results)
	}
	r := results[0]
	if want := `expected line 2 to be "a", found "y"`; r.Problem != want {
		t.Errorf("Problem = %q, want %q", r.Problem, want)
	}
	if !r.Elsewhere || r.Offset != 2 {
		t.Errorf("Elsewhere %v, Offset %d; want true, 2", r.Elsewhere, r.Offset)
	}
}

func TestExplainHunkThatMustEndTheFile(t *testing.T) {
	h := hunk{start: 1, old: linesOf("a b"), atEnd: true}
	got := h.explain(linesOf("x a b y z"), 1, 0)
	if want := "the hunk must end the file, but 2 more lines follow line 3"; got != want {
		t.Errorf("explain = %q, want %q", got, want)
	}
}

func TestQuoteShortensOnlyLongLines(t *testing.T) {
	exact := strings.Repeat("x", maxQuoted)
	if got := quote(exact + "\n"); strings.Contains(got, "...") {
		t.Errorf("a line of exactly %d characters was shortened: %s", maxQuoted, got)
	}
	if got := quote(exact + "y\n"); !strings.HasSuffix(got, `..."`) {
		t.Errorf("a line of %d characters was not shortened: %s", maxQuoted+1, got)
	}
}

func TestAbs(t *testing.T) {
	for in, want := range map[int]int{-3: 3, 0: 0, 4: 4} {
		if got := abs(in); got != want {
			t.Errorf("abs(%d) = %d, want %d", in, got, want)
		}
	}
}
