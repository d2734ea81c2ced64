package patchset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	greetings = "testdata/series/0001-polite-greetings.patch"
	version   = "testdata/series/0002-add-version.patch"
)

func baseGreet(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/base/greet.go")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// tree writes files into a fresh folder.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T, path string) *Patch {
	t.Helper()
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func patched(t *testing.T) string {
	s := baseGreet(t)
	s = strings.Replace(s, `"hello %s"`, `"hello, %s"`, 1)
	return strings.Replace(s, `"HELLO %s"`, `"HELLO, %s!"`, 1)
}

func TestLoadSeriesOrder(t *testing.T) {
	series, err := LoadSeries("testdata/series")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range series {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, " "); got != "0001-polite-greetings.patch 0002-add-version.patch" {
		t.Errorf("series order = %s", got)
	}
}

func TestLoadSeriesRefusesMisnamed(t *testing.T) {
	for _, name := range []string{"fix.patch", "0001-fix.diff", "1-fix.patch"} {
		dir := tree(t, map[string]string{name: "x", "README.md": "notes"})
		if _, err := LoadSeries(dir); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("LoadSeries with %s: err = %v, want one naming it", name, err)
		}
	}
	if s, err := LoadSeries(tree(t, map[string]string{"README.md": "empty series"})); err != nil || len(s) != 0 {
		t.Errorf("empty series: %v, %v", s, err)
	}
}

func TestApply(t *testing.T) {
	base := baseGreet(t)
	shifted := "// Two lines added above\n// everything else.\n" + base
	tests := []struct {
		name  string
		file  string // greet.go content
		patch string
		opts  Options
		// wantApplied, wantOffsets (per hunk, for applied ones) and
		// wantErr (substrings, all required) describe the outcome.
		wantApplied bool
		wantOffsets []int
		wantResult  string
		wantErr     []string
	}{
		{
			name: "clean", file: base, patch: greetings,
			wantApplied: true, wantOffsets: []int{0, 0}, wantResult: patched(t),
		},
		{
			name: "moved hunks fail strictly and say where they are", file: shifted, patch: greetings,
			wantErr: []string{
				greetings + ": greet.go: hunk #1 (@@ -4,7 +4,7 @@ import \"fmt\") does not apply: expected line 5 to be \"// Hello greets name.\", found \"import \\\"fmt\\\"\"",
				"its context matches 2 lines further down, so the patch needs a refresh",
				"hunk #2 (@@ -20,5 +20,5 @@ func filler4() {})",
			},
		},
		{
			name: "moved hunks apply with offset when asked", file: shifted, patch: greetings, opts: Options{Offset: true},
			wantApplied: true, wantOffsets: []int{2, 2},
			wantResult: "// Two lines added above\n// everything else.\n" + patched(t),
		},
		{
			name: "changed context conflicts, naming file, hunk and line", patch: greetings,
			file:    strings.Replace(base, "// Shout greets name loudly.", "// Shout greets name with capitals.", 1),
			opts:    Options{Offset: true},
			wantErr: []string{greetings + `: greet.go: hunk #2 (@@ -20,5 +20,5 @@ func filler4() {}) does not apply: expected line 21 to be "// Shout greets name loudly.", found "// Shout greets name with capitals."`},
		},
		{
			name: "conflict is explained where most of the context matches", patch: greetings,
			file:    strings.Replace(shifted, `return fmt.Sprintf("HELLO %s", name)`, `return strings.ToUpper("hello " + name)`, 1),
			wantErr: []string{`hunk #2 (@@ -20,5 +20,5 @@ func filler4() {}) does not apply: expected line 25 to be "\treturn fmt.Sprintf(\"HELLO %s\", name)", found "\treturn strings.ToUpper(\"hello \" + name)" (nearest partial match: its first 3 lines match 2 lines further down)`},
		},
		{
			name: "a conflicting hunk fails the whole patch", patch: greetings,
			file:    strings.Replace(base, `"hello %s"`, `"hi %s"`, 1),
			wantErr: []string{"hunk #1", `expected line 7 to be "\treturn fmt.Sprintf(\"hello %s\", name)", found "\treturn fmt.Sprintf(\"hi %s\", name)"`},
		},
		{
			name: "truncated file", patch: greetings, file: strings.Join(strings.SplitAfter(base, "\n")[:21], ""),
			wantErr: []string{"hunk #2", "expected line 22 to be \"func Shout(name string) string {\", but the file has only 21 lines"},
		},
		{
			name: "lines after the last hunk are kept", patch: greetings,
			file:        base + "// appended\n",
			wantApplied: true, wantOffsets: []int{0, 0}, wantResult: patched(t) + "// appended\n",
		},
		{
			name: "reverse-applies to the patched file", file: patched(t), patch: greetings, opts: Options{Reverse: true},
			wantApplied: true, wantOffsets: []int{0, 0}, wantResult: base,
		},
		{
			name: "does not forward-apply twice", file: patched(t), patch: greetings,
			wantErr: []string{"hunk #1", "hunk #2"},
		},
		{
			name: "creates a file", file: base, patch: version,
			wantApplied: true, wantOffsets: []int{0},
		},
		{
			name: "missing target", patch: greetings,
			wantErr: []string{greetings + ": greet.go: the file does not exist"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			if tt.file != "" {
				files["greet.go"] = tt.file
			}
			dir := tree(t, files)
			tr := NewTree(dir)
			r, err := tr.Apply(load(t, tt.patch), tt.opts)
			if r == nil {
				t.Fatalf("Apply: %v", err)
			}
			if r.Applied() != tt.wantApplied {
				t.Fatalf("Applied = %v, want %v (err %v)", r.Applied(), tt.wantApplied, err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %s", err, w)
				}
			}
			if tt.wantApplied {
				var offsets []int
				for _, f := range r.Files {
					for _, h := range f.Hunks {
						offsets = append(offsets, h.Offset)
					}
				}
				if len(offsets) != len(tt.wantOffsets) {
					t.Fatalf("offsets = %v, want %v", offsets, tt.wantOffsets)
				}
				for i := range offsets {
					if offsets[i] != tt.wantOffsets[i] {
						t.Errorf("offsets = %v, want %v", offsets, tt.wantOffsets)
					}
				}
				if err := tr.Write(); err != nil {
					t.Fatal(err)
				}
				if tt.wantResult != "" {
					got, _ := os.ReadFile(filepath.Join(dir, "greet.go"))
					if string(got) != tt.wantResult {
						t.Errorf("greet.go after apply:\n%s\nwant:\n%s", got, tt.wantResult)
					}
				}
			}
		})
	}
}

func TestNewFileExists(t *testing.T) {
	dir := tree(t, map[string]string{"version.go": "package greet\n\nconst Version = \"1\"\n"})
	tr := NewTree(dir)
	p := load(t, version)
	r, err := tr.Apply(p, Options{})
	if err == nil || !strings.Contains(err.Error(), version+": version.go: the diff creates this file, but it already exists") {
		t.Errorf("forward: %v", err)
	}
	if r.Applied() {
		t.Error("forward applied")
	}
	// The same content is already there: the patch reverse-applies,
	// deleting the file in the (unwritten) tree.
	rr, err := tr.Check(p, Options{Reverse: true})
	if err != nil || !rr.Applied() {
		t.Errorf("reverse: applied=%v err=%v %v", rr.Applied(), err, rr.Err())
	}
}

func TestNoNewlineAtEndOfFile(t *testing.T) {
	diff := goodHeader + `diff --git a/f.txt b/f.txt
--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 one
-two
\ No newline at end of file
+two
`
	p, err := Parse("eol.patch", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{"f.txt": "one\ntwo"})
	tr := NewTree(dir)
	if _, err := tr.Apply(p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Write(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "one\ntwo\n" {
		t.Errorf("f.txt = %q", got)
	}
	// Now the file ends in a newline: the same patch no longer applies,
	// and the message says which line lacks what.
	_, err = NewTree(dir).Apply(p, Options{})
	if err == nil || !strings.Contains(err.Error(), `expected line 2 to be "two" (no newline at end of file), found "two"`) {
		t.Errorf("err = %v", err)
	}
}

func TestDeleteFile(t *testing.T) {
	diff := goodHeader + `diff --git a/f.txt b/f.txt
deleted file mode 100644
--- a/f.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-one
-two
`
	p, err := Parse("del.patch", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		content string
		wantErr string
	}{
		{"one\ntwo\n", ""},
		{"one\ntwo\nthree\n", "must end the file, but 1 more lines follow line 2"},
	}
	for _, tt := range tests {
		dir := tree(t, map[string]string{"f.txt": tt.content})
		tr := NewTree(dir)
		_, err := tr.Apply(p, Options{})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("content %q: err = %v, want %q", tt.content, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Write(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "f.txt")); !os.IsNotExist(err) {
			t.Errorf("f.txt still exists: %v", err)
		}
	}
}

// A series that fails part way writes nothing at all.
func TestApplySeriesIsAllOrNothing(t *testing.T) {
	base := baseGreet(t)
	dir := tree(t, map[string]string{"greet.go": base, "version.go": "package greet\n"})
	series, err := LoadSeries("testdata/series")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplySeries(dir, series); err == nil || !strings.Contains(err.Error(), "0002-add-version.patch: version.go") {
		t.Fatalf("err = %v, want the second patch to fail on version.go", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.go")); string(got) != base {
		t.Error("greet.go was written although the series failed")
	}

	dir = tree(t, map[string]string{"greet.go": base})
	results, err := ApplySeries(dir, series)
	if err != nil || len(results) != 2 {
		t.Fatalf("ApplySeries: %d results, %v", len(results), err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.go")); string(got) != patched(t) {
		t.Errorf("greet.go = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "version.go")); err != nil {
		t.Error(err)
	}
}
