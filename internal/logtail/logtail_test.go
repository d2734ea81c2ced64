package logtail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"empty", "", 3, "    (log is empty)"},
		{"fewer than n", "a\nb\n", 3, "    a\n    b"},
		{"exactly n", "a\nb\nc", 3, "    a\n    b\n    c"},
		{"more than n keeps the end", "a\nb\nc\nd\n", 2, "    c\n    d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Lines(tc.in, tc.n); got != tc.want {
				t.Errorf("Lines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestLastReadsOnlyTheEndOfABigLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.log")
	big := strings.Repeat("filler line\n", 2*maxRead/len("filler line\n")) + "second to last\nlast\n"
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := Last(path, 2), "    second to last\n    last"; got != want {
		t.Errorf("Last = %q, want %q", got, want)
	}
}

func TestLastMissingFileSaysSo(t *testing.T) {
	got := Last(filepath.Join(t.TempDir(), "nope.log"), 5)
	if !strings.Contains(got, "no log") {
		t.Errorf("Last of a missing file = %q, want a note that there is no log", got)
	}
}
